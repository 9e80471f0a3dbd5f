"""Naming and quantity rules for resources.

Resources outside XCE's built-in vocabulary come from many sites and providers; a domain
prefix (``example.com/gpu``) keeps two sites' ``gpu`` from silently meaning the same thing
when hosts, configurations or requests are merged.  ``xce.io/`` is reserved so that a site
cannot shadow a resource XCE's own providers will publish later.

Quantities are whole numbers because the core charges, sums and compares them exactly:
with fractions, the sum of what jobs hold would drift from what a host has, and replays
would depend on float rounding.  A fraction is expressed with a smaller unit instead
(500 of ``xce.io/cpu-milli``, never 0.5 of a CPU).

Every error names the rule it enforces and shows a corrected example, because these
messages reach users who wrote a job script, not the people who wrote this module.
"""

from __future__ import annotations

import math
import re

__all__ = [
    "BUILTIN_RESOURCES",
    "MEMORY_RESOURCES",
    "RESERVED_DOMAIN",
    "QuantityError",
    "ResourceNameError",
    "validate_quantity",
    "validate_resource_name",
]

BUILTIN_RESOURCES: frozenset[str] = frozenset(
    {"slots", "mem", "maxmem", "ncpus", "swp", "r15s", "r1m", "r15m", "ut", "type", "model", "gpu_model", "cpu_time"}
)
# Requests give these in MiB when no unit is written (LSF's habit); the core keeps bytes.
MEMORY_RESOURCES: frozenset[str] = frozenset({"mem", "maxmem", "swp"})

RESERVED_DOMAIN = "xce.io"

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_DOMAIN_RE = re.compile(rf"{_LABEL}(?:\.{_LABEL})+")
_PART_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


class ResourceNameError(ValueError):
    """A resource name that breaks one of the naming rules; ``rule`` says which, for callers
    that react to the kind of mistake rather than to the wording."""

    def __init__(self, name: str, rule: str, message: str) -> None:
        super().__init__(message)
        self.name = name
        self.rule = rule

    def __reduce__(self):  # keep the attributes when the error crosses a process boundary
        return (type(self), (self.name, self.rule, str(self)))


class QuantityError(ValueError):
    """A resource quantity the core cannot charge exactly (a fraction, a negative, a non-number)."""

    def __init__(self, name: str, value: object, rule: str, message: str) -> None:
        super().__init__(message)
        self.name = name
        self.value = value
        self.rule = rule

    def __reduce__(self):
        return (type(self), (self.name, self.value, self.rule, str(self)))


def _example_part(text: str) -> str:
    # Suggest the user's own name after the domain when it could stand there; otherwise a
    # generic one, so the example we show is itself always valid.
    return text if _PART_RE.fullmatch(text) else "gpu"


def validate_resource_name(name: str, *, allow_reserved: bool = False) -> None:
    """Raise :class:`ResourceNameError` unless ``name`` may name a resource.

    The rules are checked in a fixed order so a name breaking several gets the message
    for the most basic mistake first (a missing prefix before a malformed one).
    ``allow_reserved`` is for XCE's own providers and for requests that merely *consume*
    an ``xce.io/`` resource; definitions pushed by sites leave it False.
    """
    if name in BUILTIN_RESOURCES:
        return
    if "/" not in name:
        raise ResourceNameError(
            name,
            "domain-prefix",
            f'resource name "{name}" breaks the rule "a domain prefix is required" '
            f"(expected DOMAIN/NAME, e.g. example.com/{_example_part(name)})",
        )
    domain, _, part = name.partition("/")
    if "." not in domain:
        raise ResourceNameError(
            name,
            "domain-dot",
            f'resource name "{name}" breaks the rule "the domain must contain a dot" '
            f"(e.g. example.com/{_example_part(part)})",
        )
    if not _DOMAIN_RE.fullmatch(domain):
        raise ResourceNameError(
            name,
            "malformed",
            f'resource name "{name}" is malformed: the domain "{domain}" must be dot-separated '
            f"labels of letters, digits and inner hyphens (e.g. example.com/{_example_part(part)})",
        )
    if not _PART_RE.fullmatch(part):
        raise ResourceNameError(
            name,
            "malformed",
            f'resource name "{name}" is malformed: the part after "/" must be non-empty, use only '
            f'letters, digits, ".", "_" and "-", and start and end with a letter or digit '
            f"(e.g. {domain}/gpu)",
        )
    if domain.lower() == RESERVED_DOMAIN and not allow_reserved:
        raise ResourceNameError(
            name,
            "reserved-domain",
            f'resource name "{name}" uses the reserved domain "{RESERVED_DOMAIN}/" '
            f"(only XCE's own providers may use it; choose your own domain)",
        )


def validate_quantity(name: str, value: object) -> int:
    """Return ``value`` as an exact ``int`` or raise :class:`QuantityError`.

    Integral floats (``4.0``, as JSON or YAML often deliver them) are accepted because no
    information is lost; ``bool`` is refused although it is an ``int`` subclass, since
    ``True`` as a quantity is always a bug upstream.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise QuantityError(name, value, "number", f'quantity {value!r} for "{name}" must be a whole number')
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise QuantityError(
                name,
                value,
                "whole-number",
                f'quantity {value!r} for "{name}" breaks the rule "quantities are whole numbers" '
                f"(express fractions with a smaller unit, e.g. 500 of xce.io/cpu-milli, never 0.5)",
            )
        value = int(value)
    if value < 0:
        raise QuantityError(name, value, "non-negative", f'quantity {value!r} for "{name}" must not be negative')
    return value
