"""How people write job ids, array ranges and job names, parsed in one place.

Every command that takes a job takes ``ID``, ``ID[INDEX]``, ``ID[1-5,9]`` (Slurm's ``ID_INDEX`` too) and
``NAME`` (or ``NAME[INDEX]``), as LSF's ``bkill 76[1]`` and ``bjobs -J sweep`` do; submission takes the same
index list with a concurrency limit, ``1-100:2%10`` (``-J "sweep[1-100:2]%10"`` or Slurm's
``--array 1-100:2%10``). The CLI parses what it is given for an immediate usage error, the controller
parses it again to resolve it: both call this module, so they cannot disagree.

It is imported by ``xce submit`` and ``xce jobs``, whose whole run must stay about one interpreter
start: standard library only, and no ``re``.
"""

from __future__ import annotations

#: Most elements one array may have (the API's bound as well).
MAX_ELEMENTS = 100_000
#: Largest array index (LSF's own bound is far smaller; this keeps indexes 32-bit).
MAX_INDEX = 2**31 - 1
MAX_NAME = 128


class RefError(ValueError):
    """Text that is not a job reference; the message names the text and the column."""


class JobRef:
    """``id`` or ``name`` (exactly one), and the array indexes it is narrowed to (None: all).
    (A plain class: dataclasses would cost ``xce jobs`` the import of ``inspect``.)"""

    __slots__ = ("id", "name", "indexes")

    def __init__(self, id: int | None = None, name: str | None = None,
                 indexes: tuple[int, ...] | None = None) -> None:
        self.id, self.name, self.indexes = id, name, indexes

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobRef) and (self.id, self.name, self.indexes) == (other.id, other.name, other.indexes)

    def __repr__(self) -> str:
        return f"JobRef({self})"

    def __str__(self) -> str:
        head = str(self.id) if self.id is not None else str(self.name)
        return head if self.indexes is None else f"{head}[{format_indexes(self.indexes)}]"


def _fail(text: str, col: int, what: str, kind: str = "job") -> RefError:
    return RefError(f"{kind} {text!r}: {what} at column {col + 1}")


def _number(text: str, pos: int, stop: int, kind: str) -> tuple[int, int]:
    end = pos
    while end < stop and text[end].isdigit() and text[end].isascii():
        end += 1
    if end == pos:
        found = repr(text[pos]) if pos < stop else "the end"
        raise _fail(text, pos, f"expected a number, found {found}", kind)
    return int(text[pos:end]), end


def parse_indexes(text: str, start: int = 0, stop: int | None = None, kind: str = "job") -> tuple[int, ...]:
    """``1-10:2,15`` -> (1, 3, 5, 7, 9, 15): sorted, without repeats; refused when empty or too large."""
    stop = len(text) if stop is None else stop
    out: set[int] = set()
    pos = start
    while True:
        first, pos = _number(text, pos, stop, kind)
        last, step = first, 1
        if pos < stop and text[pos] == "-":
            last, pos = _number(text, pos + 1, stop, kind)
            if last < first:
                raise _fail(text, pos - 1, f"range {first}-{last} runs backwards", kind)
            if pos < stop and text[pos] == ":":
                step, pos = _number(text, pos + 1, stop, kind)
                if step < 1:
                    raise _fail(text, pos - 1, "the step must be at least 1", kind)
        if last > MAX_INDEX:
            raise _fail(text, pos - 1, f"index {last} is larger than {MAX_INDEX}", kind)
        if len(out) + (last - first) // step + 1 > MAX_ELEMENTS:
            raise _fail(text, pos - 1, f"more than {MAX_ELEMENTS} indexes", kind)
        out.update(range(first, last + 1, step))
        if pos >= stop:
            return tuple(sorted(out))
        if text[pos] != ",":
            raise _fail(text, pos, f"expected ',', '-' or ':', found {text[pos]!r}", kind)
        pos += 1


def format_indexes(indexes: tuple[int, ...] | list[int]) -> str:
    """The shortest ``1-5,7`` form of sorted indexes."""
    parts, i, xs = [], 0, list(indexes)
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        parts.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ",".join(parts)


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 32 or 0x7F <= code < 0xA0 or ch in "\u2028\u2029"


def _slurm_element(head: str) -> tuple[int, int | None] | None:
    """``12_3`` -> (12, 3) and ``12_`` (before ``[1-3]``) -> (12, None): Slurm's way to write elements."""
    first, sep, index = head.partition("_")
    if not sep or not (first.isdigit() and first.isascii()) or (index and not (index.isdigit() and index.isascii())):
        return None
    return int(first), int(index) if index else None


def check_name(name: str, kind: str = "job name") -> str:
    """A job name: 1-128 characters of any kind, spaces and ``( ) [ ] : , * %`` included, as LSF and
    Slurm take them. Refused: control characters (a newline would forge lines in everyone's listings),
    a space at either end (references are trimmed), what reads as a job id (``12``, Slurm's ``12_3``),
    and a trailing ``[...]``, which is always an array's indexes (``sweep[3]``)."""
    if not name:
        raise RefError(f"{kind}: must not be empty")
    if len(name) > MAX_NAME:
        raise RefError(f"{kind} {name[:20]!r}...: longer than {MAX_NAME} characters")
    for i, ch in enumerate(name):
        if _is_control(ch):
            raise _fail(name, i, f"{ch!r} is not allowed in a job name (no control characters: newline, tab ...)",
                        kind)
    if name != name.strip():
        raise RefError(f"{kind} {name!r}: a name must not start or end with a space")
    if name.isdigit() or _slurm_element(name) is not None:
        raise RefError(f"{kind} {name!r}: a name must not be all digits, or digits '_' digits "
                       f"(that reads as a job id, 12 or 12_3)")
    if name.endswith("]"):
        raise RefError(f"{kind} {name!r}: a name must not end with ']' (a trailing [...] is an array's indexes, "
                       f"as in sweep[1-10])")
    return name


def parse_ref(text: str) -> JobRef:
    """``76``, ``76[1]``, ``76[1-5,9]``, Slurm's ``76_1`` and ``76_[1-5]``, ``sweep``, ``sweep[3]``,
    ``my run (v2)``: only a trailing ``[...]`` is indexes, so brackets inside a name stay its own."""
    text = text.strip()
    if not text:
        raise RefError("job: expected a job id or name, got an empty string")
    head, indexes = text, None
    if text.endswith("]"):
        bracket = text.rfind("[")
        if bracket < 0:
            raise _fail(text, len(text) - 1, "expected '[' before this ']'")
        indexes = parse_indexes(text, bracket + 1, len(text) - 1)
        head = text[:bracket]
    if not head:
        raise _fail(text, 0, "expected a job id or name before '['")
    element = _slurm_element(head)
    if head.isdigit() and head.isascii():
        jobid = int(head)
    elif element is not None and (element[1] is None) == (indexes is not None):
        jobid = element[0]
        if element[1] is not None:
            indexes = (element[1],)
    elif element is not None:
        raise _fail(text, len(head), "expected either ID_INDEX or ID_[INDEXES]")
    else:
        return JobRef(name=check_name(head), indexes=indexes)
    if jobid < 1 or jobid > 2**63 - 1:
        raise RefError(f"job {text!r}: job ids are whole numbers from 1 to {2**63 - 1}")
    return JobRef(id=jobid, indexes=indexes)


def ref_arg(text: str) -> str:
    """``type=`` for CLI arguments: refuses a malformed reference at once, passes the text on."""
    parse_ref(text)
    return text.strip()


class ArraySpec:
    """An array's indexes (sorted) and how many of its elements may run at once (None: no limit)."""

    __slots__ = ("indexes", "limit")

    def __init__(self, indexes: tuple[int, ...], limit: int | None = None) -> None:
        self.indexes, self.limit = indexes, limit

    def __str__(self) -> str:
        return format_indexes(self.indexes) + (f"%{self.limit}" if self.limit is not None else "")


def parse_array(text: str) -> ArraySpec:
    """``1-100:2%10`` (indexes and at most 10 running at once); a bare ``N`` is ``1-N``, as
    ``--array N`` has always meant N elements."""
    text = text.strip()
    body, pct, limit_text = text.partition("%")
    limit = None
    if pct:
        if not limit_text.isdigit() or not limit_text.isascii() or int(limit_text) < 1:
            raise RefError(f"array {text!r}: expected a limit of at least 1 after '%' at column {len(body) + 2}")
        limit = int(limit_text)
    if body.isdigit() and body.isascii():
        n = int(body)
        if n < 1 or n > MAX_ELEMENTS:
            raise RefError(f"array {text!r}: expected 1 to {MAX_ELEMENTS} elements")
        return ArraySpec(tuple(range(1, n + 1)), limit)
    return ArraySpec(parse_indexes(body, kind="array"), limit)


def split_name(text: str) -> tuple[str, str | None]:
    """``-J "sweep[1-100:2]%10"`` -> ("sweep", "1-100:2%10"); ``-J sweep`` -> ("sweep", None);
    ``-J "fit[a] (v2)"`` -> ("fit[a] (v2)", None): only a trailing ``[...]`` (and ``%LIMIT``) is an array."""
    body, limit = text, ""
    pct = text.rfind("%")
    if pct > 0 and text[pct - 1] == "]":
        body, limit = text[:pct], text[pct:]
    if not body.endswith("]"):
        return check_name(text), None
    bracket = body.rfind("[")
    if bracket < 0:
        raise _fail(text, len(body) - 1, "expected '[' before this ']' (NAME[1-10] makes an array)", "job name")
    name = check_name(body[:bracket])
    spec = body[bracket + 1:-1] + limit
    parse_array(spec)
    return name, spec


def array_arg(text: str) -> str:
    """``type=`` for ``--array``: refuses a malformed array at once, passes the text on."""
    parse_array(text)
    return text.strip()


_SLURM_KINDS = {"after": "started", "afterok": "done", "afternotok": "exit", "afterany": "ended"}


def from_slurm(text: str) -> str:
    """Slurm's ``--dependency=afterok:12:13,afterany:14`` in LSF's words, ``done(12) && done(13) &&
    ended(14)`` (``after`` -> started, ``afterok`` -> done, ``afternotok`` -> exit, ``afterany`` ->
    ended; ``,`` -> ``&&``, ``?`` -> ``||``; ``12_3`` -> ``12[3]``; ``singleton`` -> ``singleton()``, which
    the controller resolves to the user's unfinished jobs of the same name). RefError names the part."""
    if "," in text and "?" in text:
        raise RefError(f"dependency {text!r}: use ',' (all of) or '?' (any of), not both")
    out = []
    for part in text.replace("?", ",").split(","):
        if part.strip() == "singleton":  # after the user's earlier jobs of the same name (the controller's)
            out.append("singleton()")
            continue
        kind, _, ids = part.strip().partition(":")
        if kind not in _SLURM_KINDS or not ids:
            raise RefError(f"dependency {text!r}: {part!r} is not TYPE:JOB[:JOB...] with TYPE one of "
                           f"{', '.join(_SLURM_KINDS)}, nor singleton")
        for job in ids.split(":"):
            head, sep, index = job.strip().partition("_")
            out.append(f"{_SLURM_KINDS[kind]}({head}[{index}])" if sep else f"{_SLURM_KINDS[kind]}({head})")
    return (" || " if "?" in text else " && ").join(out)
