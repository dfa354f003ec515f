"""Units of the stored data model."""

from __future__ import annotations


def memory_mib(value: str | int | None) -> int:
    """A container row's ``memory`` as MiB. Zun keeps it as a string of MiB; anything
    that is not all digits (unset, empty, a legacy ``"512M"``) holds no memory and
    counts as 0, everywhere usage is summed or requested."""
    if value is None:
        return 0
    text = str(value)
    return int(text) if text.isdigit() else 0
