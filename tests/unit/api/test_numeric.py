"""Patterns that bound numbers written as text (berth.api.schemas.numeric): a string
matches exactly when its value is within the bounds."""

from __future__ import annotations

import random
import re
from decimal import Decimal

import pytest

from berth.api.schemas.numeric import decimal_text, integer_text


def compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace("$", r"\Z"))


@pytest.mark.parametrize("low,high", [(4, 8192), (1, 160), (0, 7), (-1, 2**31 - 1),
                                      (1, 1), (10, 19), (7, 1_000_000)])
def test_integer_text_matches_exactly_the_integers_in_range(low: int, high: int) -> None:
    pattern = compiled(integer_text(low, high))
    rng = random.Random(low * 31 + high)
    numbers = [*range(-3, 300), high - 1, high, high + 1, low - 1, low, low + 1,
               *(rng.randint(0, 2**32) for _ in range(2000))]
    for n in numbers:
        texts = [str(n), f"0{n}"] if n >= 0 else [str(n)]
        for text in texts:
            assert bool(pattern.match(text)) == (low <= n <= high), (low, high, text)
    assert not pattern.match("") and not pattern.match("1.0") and not pattern.match("1\n")


@pytest.mark.parametrize("low,high", [(0.1, 16.0), (0.5, 2.25), (1, 4), (0.25, 16),
                                      (0, 3.5)])
def test_decimal_text_matches_exactly_the_decimals_in_range(low: float, high: float) -> None:
    pattern = decimal_text(low, high)
    assert pattern is not None
    matcher = compiled(pattern)
    rng = random.Random(int(low * 100 + high))
    for _ in range(5000):
        whole = str(rng.randint(0, 20))
        frac = str(rng.randint(0, 999)).zfill(rng.randint(1, 3))
        for text in (whole, f"{whole}.{frac}", f".{frac}"):
            value = Decimal(text if not text.startswith(".") else f"0{text}")
            assert bool(matcher.match(text)) == (Decimal(str(low)) <= value
                                                 <= Decimal(str(high))), (low, high, text)
    assert not matcher.match("") and not matcher.match(".") and not matcher.match("1e1")


def test_bounds_within_one_integer_are_left_to_the_value_check() -> None:
    assert decimal_text(0.1, 0.9) is None
