"""Regular expressions that bound numbers written as strings.

Zun's clients send numbers as text (``"memory": "64"``, ``"cpu": "0.5"``), and a JSON
Schema ``minimum`` does not apply to a string: without these patterns a declaration
would publish ``"99999"`` as valid memory that the API then refuses. With them the
published pattern accepts exactly the strings whose value is within the bounds, so the
document and the check agree. The integer construction is the classic one (split the
range where trailing digits run 0-9, one character class per digit).
"""

from __future__ import annotations

from decimal import Decimal


def integer_range(low: int, high: int) -> str:
    """An alternation (no anchors) matching the decimal digits of every integer in
    ``low``..``high`` (both >= 0) and nothing else; leading zeros are not matched."""
    if not 0 <= low <= high:
        raise ValueError(f"bad range {low}..{high}")
    parts: list[str] = []
    start = low
    for stop in _stops(low, high):
        parts.append(_span(start, stop))
        start = stop + 1
    return "|".join(parts)


def _stops(low: int, high: int) -> list[int]:
    stops = {high}
    nines = 1
    stop = _fill_nines(low, nines)
    while low <= stop < high:
        stops.add(stop)
        nines += 1
        stop = _fill_nines(low, nines)
    zeros = 1
    stop = _fill_zeros(high + 1, zeros) - 1
    while low < stop <= high:
        stops.add(stop)
        zeros += 1
        stop = _fill_zeros(high + 1, zeros) - 1
    return sorted(stops)


def _fill_nines(number: int, count: int) -> int:
    text = str(number)
    return int(text[:-count] + "9" * count) if count <= len(text) else int("9" * count)


def _fill_zeros(number: int, count: int) -> int:
    return number - number % 10 ** count


def _span(start: int, stop: int) -> str:
    """``start``..``stop``, which share their digits but for a tail of 0-9 runs."""
    pattern, free = "", 0
    for a, b in zip(str(start).zfill(len(str(stop))), str(stop)):
        if a == b:
            pattern += a
        elif a != "0" or b != "9":
            pattern += f"[{a}-{b}]"
        else:
            free += 1
    if free:
        pattern += "[0-9]" + (f"{{{free}}}" if free > 1 else "")
    return pattern


def integer_text(low: int, high: int) -> str:
    """An anchored pattern for the integers ``low``..``high`` written in decimal, with
    leading zeros allowed (``"0128"``), and ``-1`` when ``low`` is -1 (unlimited)."""
    if low < -1:
        raise ValueError("only -1 is allowed below zero")
    body = f"0*({integer_range(max(low, 0), high)})"
    if low == -1:
        body = f"-0*1|{body}"
    return f"^({body})$"


def decimal_text(low: float, high: float) -> str | None:
    """An anchored pattern for the decimals (``"2"``, ``"0.5"``, ``".5"``) whose value
    is within ``low``..``high`` (>= 0), or None when the bounds share their integer
    part (then the caller checks the value instead)."""
    lo_int, lo_frac = _parts(low)
    hi_int, hi_frac = _parts(high)
    if lo_int >= hi_int:
        return None
    whole = "0*" + "(" + "{}" + ")"
    options: list[str] = []
    # The integer part strictly between the bounds: any fraction.
    if lo_int + 1 <= hi_int - 1:
        options.append(whole.format(integer_range(lo_int + 1, hi_int - 1))
                       + r"(\.[0-9]+)?")
    # The lower bound's integer part: a fraction no smaller than the bound's.
    lower = "0*" if lo_int == 0 else f"0*{lo_int}"
    options.append(lower + (rf"(\.({_fraction_at_least(lo_frac)}))" if lo_frac
                            else r"(\.[0-9]+)?"))
    # The upper bound's integer part: a fraction no larger than the bound's.
    options.append(f"0*{hi_int}" + (rf"(\.({_fraction_at_most(hi_frac)}))?" if hi_frac
                                    else r"(\.0+)?"))
    return "^(?=.)(" + "|".join(options) + ")$"


def _parts(value: float) -> tuple[int, str]:
    text = format(Decimal(str(value)), "f")
    whole, _, frac = text.partition(".")
    return int(whole), frac.rstrip("0")


def _fraction_at_least(digits: str) -> str:
    """Fraction digits (after the point) whose value is >= 0.<digits>."""
    options = [digits + "[0-9]*"]
    for i, d in enumerate(digits):
        if d != "9":
            options.append(f"{digits[:i]}[{int(d) + 1}-9][0-9]*")
    return "|".join(options)


def _fraction_at_most(digits: str) -> str:
    """Fraction digits whose value is <= 0.<digits>."""
    options = [digits + "0*"]
    for i, d in enumerate(digits):
        if d != "0":
            options.append(f"{digits[:i]}[0-{int(d) - 1}][0-9]*")
    return "|".join(options)
