"""Exact number handling for resource requirement strings.

Numbers are read as exact rationals (numerator, denominator) and only rounded once, at
the very end, because ``0.1G`` or ``mem > 0.5`` must give the same bytes on every
machine and after every round trip through :func:`str`.  Printing is the inverse: every
value the parser can produce is printed as text the parser reads back to the *same*
value, without exponent notation (the grammar has none).

Units are binary (K = 1024) and, for the memory resources, a number without a unit is
MiB, as in LSF; see :mod:`xce.core.resreq` for where that default applies.
"""

from __future__ import annotations

UNITS: dict[str, int] = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
MIB = 1024**2
# Largest first, so a byte count prints with the biggest unit that divides it.
_UNITS_DESC: tuple[tuple[str, int], ...] = (("T", 1024**4), ("G", 1024**3), ("M", 1024**2), ("K", 1024))
# Smallest positive normal double: below it, dividing by 1024 loses bits.
_MIN_NORMAL = 2.0**-1022

__all__ = ["MIB", "UNITS", "format_bytes", "format_number", "rational_value"]


def rational_value(num: int, den: int) -> int | float:
    """The value of num/den: an exact ``int`` when whole, else the correctly rounded float.

    Raises OverflowError when the value does not fit a float (callers turn that into a
    syntax error).
    """
    q, r = divmod(num, den)
    if r == 0:
        return q
    return num / den  # int/int true division is correctly rounded in CPython


def _plain_float(value: float) -> str:
    """``repr`` (shortest text that reads back to the same float) without exponent notation."""
    text = repr(value)
    if "e" not in text and "E" not in text:
        return text
    mantissa, _, exp_text = text.partition("e")
    sign = ""
    if mantissa.startswith("-"):
        sign, mantissa = "-", mantissa[1:]
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    point = len(int_part) + int(exp_text)
    if point <= 0:
        body = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        body = digits + "0" * (point - len(digits))
    else:
        body = digits[:point] + "." + digits[point:]
    if "." in body:
        body = body.rstrip("0").rstrip(".")
    return sign + (body or "0")


def _exact_dyadic(num: int, den: int) -> str:
    """Exact decimal text of num/den for den a power of two (such fractions always terminate)."""
    k = den.bit_length() - 1
    scaled = str(num * 5**k).rjust(k + 1, "0")
    int_part, frac_part = scaled[: len(scaled) - k], scaled[len(scaled) - k :].rstrip("0")
    return int_part + ("." + frac_part if frac_part else "")


def format_number(value: int | float) -> str:
    """A number as a bare literal (no unit): ints in full, floats without exponent."""
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return _plain_float(value)
    return str(int(value))


def format_bytes(value: int | float) -> str:
    """A byte count as a literal WITH a unit, so it is never mistaken for a MiB default.

    Whole multiples print with the largest dividing unit (``4G``); anything else prints as
    an exact decimal number of KiB (``1.5K``, ``0.0009765625K`` for one byte) - always
    exact because x/1024 terminates in decimal.  Zero is unit-less: 0 MiB is 0 bytes.
    """
    if value == 0:
        return "0"
    if value < 0:
        return "-" + format_bytes(-value)
    if isinstance(value, float):
        if value.is_integer():
            value = int(value)
        else:
            kib = value / 1024
            if kib >= _MIN_NORMAL and kib * 1024 == value:
                # Scaling by a power of two commutes with rounding for normal floats, so the
                # shortest text for value/1024 reads back (times 1024) to exactly value.
                return _plain_float(kib) + "K"
            num, den = value.as_integer_ratio()
            return _exact_dyadic(num, den * 1024) + "K"
    for unit, mult in _UNITS_DESC:
        if value % mult == 0:
            return f"{value // mult}{unit}"
    return _exact_dyadic(value, 1024) + "K"
