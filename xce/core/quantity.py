"""The one grammar for quantities and host names, read and written the same way everywhere.

Quantities reach XCE through the command line (``--request mem=2G``), the REST API
(``"requests": {"mem": "2G"}``), the configuration (``total = "4K"``, ``mem = "32G"`` in a
simulated cluster) and the resource requirement language (``rusage[mem=2GB]``,
``select[mem > 4g]``).  They all go through this module, so a string means the same amount
and fails with the same words wherever it is typed.

The rule, as LSF and Slurm read sizes:

* a number (``2``, ``1.5``) with an optional unit ``K M G T P`` in either case, optionally
  followed by ``B`` or ``iB`` (``2G`` = ``2g`` = ``2GB`` = ``2GiB``);
* every unit is a power of 1024 (``1K`` = 1024);
* for the memory resources (``mem``, ``maxmem``, ``swp``) a number without a unit is MiB
  (LSF's habit: ``mem=4000`` is 4000 MiB); for every other resource it is a plain count;
* the amount must come out whole (of bytes for memory): ``0.5G`` is fine, ``0.1M`` of
  memory or ``0.5`` of a GPU is not (fractions are written with a smaller unit).

A JSON number in the API is not text: it is already the exact amount (bytes for memory).

Host names follow RFC 1123 labels with dots (``vm-w1``, ``node07.example.com``); inside
``select[]`` they are read as names, never as a subtraction, where they are compared with
``hname``.

Pure (no I/O), so the core's parser can use it; stdlib only, so the CLI's fast path can too.
"""

from __future__ import annotations

import re

from xce.core.resources.naming import MEMORY_RESOURCES, QuantityError

__all__ = [
    "HOSTNAME_RE",
    "MAX_QUANTITY",
    "MIB",
    "NUMBER_RE",
    "QuantityError",
    "QUANTITY_EXPECTED",
    "UNITS",
    "format_bytes",
    "format_number",
    "format_quantity",
    "human_quantity",
    "parse_quantity",
    "quantity_fraction",
    "rational_value",
    "whole_expected",
]

UNITS: dict[str, int] = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
MIB = 1024**2
#: Largest amount the API, the CLI and the configuration take (it must fit a signed 64-bit column).
MAX_QUANTITY = 2**63 - 1
# Largest first, so an amount prints with the biggest unit that divides it (exact) or reaches it (human).
_UNITS_DESC: tuple[tuple[str, int], ...] = tuple(sorted(UNITS.items(), key=lambda kv: -kv[1]))
# Smallest positive normal double: below it, dividing by 1024 loses bits.
_MIN_NORMAL = 2.0**-1022

#: digits, optional .digits, optional unit (any case) with an optional B or iB; groups: integer, fraction, unit.
#: ASCII only on purpose (``\d`` would accept Arabic-Indic digits).
NUMBER_RE = re.compile(r"([0-9]+)(?:\.([0-9]+))?(?:([KMGTPkmgtp])(?:[iI]?[bB])?)?")
#: What every surface says when the text is not a quantity at all.
QUANTITY_EXPECTED = "a number with an optional unit K, M, G, T or P (powers of 1024)"
#: A host name: letters, digits, inner hyphens and dots (RFC 1123), underscores tolerated as sites use them.
HOSTNAME_RE = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?")
_NOT_NEGATIVE = "a non-negative quantity"
_SMALLER = "a smaller number"


def whole_expected(name: str) -> str:
    """What a fractional amount should have been, in the words every surface uses."""
    return "a whole number of bytes" if name in MEMORY_RESOURCES else "a whole number"


def quantity_fraction(name: str, int_part: str, frac_part: str | None, unit: str | None,
                      in_expression: bool = False) -> tuple[int, int]:
    """The exact value (numerator, denominator) of a literal matched by :data:`NUMBER_RE`.

    ``in_expression`` is for ``select``/``order`` literals, where the MiB default is decided
    by the parser from the comparison around the literal, not from ``name``.
    """
    frac_part = frac_part or ""
    num, den = int(int_part + frac_part), 10 ** len(frac_part)
    if unit is not None:
        num *= UNITS[unit.upper()]
    elif name in MEMORY_RESOURCES and not in_expression:
        num *= MIB
    return num, den


def _error(name: str, text: str, expected: str) -> QuantityError:
    where = f' for "{name}"' if name else ""
    return QuantityError(name, text, "quantity", f'quantity "{text}"{where}: expected {expected}')


def parse_quantity(name: str, text: str) -> int:
    """``text`` as the exact amount of ``name`` (bytes for memory), or :class:`QuantityError`
    whose message is ``quantity "TEXT" for "NAME": expected ...`` with the same ``expected``
    phrase the resource requirement language reports for the same text."""
    stripped = text.strip()
    if stripped.startswith("-"):
        raise _error(name, stripped, _NOT_NEGATIVE)
    m = NUMBER_RE.fullmatch(stripped)
    if m is None:
        raise _error(name, stripped, QUANTITY_EXPECTED)
    if len(m.group(1)) > 100 or len(m.group(2) or "") > 100:
        raise _error(name, stripped, _SMALLER)
    num, den = quantity_fraction(name, *m.groups())
    if num % den:
        raise _error(name, stripped, whole_expected(name))
    amount = num // den
    if amount > MAX_QUANTITY:
        raise _error(name, stripped, _SMALLER)
    return amount


def format_quantity(name: str, amount: int) -> str:
    """Text that :func:`parse_quantity` reads back to exactly ``amount``: memory always with a
    unit (:func:`format_bytes`), every other resource as a plain number."""
    return format_bytes(amount) if name in MEMORY_RESOURCES else str(amount)


def human_quantity(name: str, amount: int | float, *, memory: bool | None = None) -> str:
    """For people: memory in the largest unit it reaches, one decimal when not whole (``4G``,
    ``1.5G``, ``877.3G``, ``512B``); every other resource as the number itself. ``memory``
    forces the memory reading for names outside the built-in three (``memory_rss``)."""
    if memory is None:
        memory = name in MEMORY_RESOURCES
    if not memory or not amount:
        return str(amount)
    for suffix, size in _UNITS_DESC:
        if abs(amount) >= size:
            whole, rest = divmod(amount, size)
            return f"{int(whole)}{suffix}" if rest == 0 else f"{amount / size:.1f}{suffix}"
    return f"{int(amount)}B" if float(amount).is_integer() else f"{amount:.1f}B"


# -- exact printing (the inverse of the parsers, also of select/order literals) ------------------


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
