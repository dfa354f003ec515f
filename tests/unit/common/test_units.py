import pytest

from berth.common.units import memory_mib


@pytest.mark.parametrize(("value", "mib"), [
    ("512", 512), (256, 256), ("0", 0), (None, 0), ("", 0), ("512M", 0), ("-5", 0),
    ("1.5", 0),
])
def test_memory_mib_reads_only_a_string_of_digits(value: str | int | None, mib: int) -> None:
    assert memory_mib(value) == mib
