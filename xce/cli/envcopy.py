"""A job's environment: the submitter's, as LSF (``-env all``) and Slurm (``--export=ALL``) copy it.

One grammar, ``--env ITEM[,ITEM...]`` (repeatable), that LSF's ``-env`` and Slurm's ``--export``
are translated into:

* ``all``: start from the submitter's whole environment (the default);
* ``none``: start from nothing (anywhere in the list: the job sees only what is named);
* ``NAME=VALUE``: set a variable;
* ``NAME``: copy the submitter's value (nothing when it has none);
* ``~NAME``: leave it out (LSF);
* ``PREFIX*``: copy the submitter's variables whose names start with PREFIX (``SLURM_*``).

A value may hold commas: a piece that is none of the above belongs to the value before it
(``A=1,2,B=3`` sets ``A`` to ``1,2``). ``XCE_TOKEN`` is never copied: it is a secret, and a job's
environment is stored with the job; name it with a value to give one on purpose.
"""

from __future__ import annotations

#: Never copied from the submitter's environment (only given explicitly).
SECRETS = frozenset({"XCE_TOKEN"})
_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_REST = _FIRST | frozenset("0123456789")


def _is_name(text: str) -> bool:
    """A shell variable name (``re`` would cost the submit command's start-up more than this)."""
    return bool(text) and text[0] in _FIRST and all(c in _REST for c in text)

_TOO_BIG = "use --env none plus the variables the job needs, or leave some out with --env ~NAME"


class EnvError(ValueError):
    """An --env (or -env, --export) list that cannot be read, or an environment too big to send."""


def _is_item(piece: str) -> bool:
    word = piece.strip()
    if word.lower() in ("all", "none"):
        return True
    name = word[1:] if word.startswith("~") else word.partition("=")[0]
    if name.endswith("*") and "=" not in word:
        name = name[:-1]
    return _is_name(name)


def split_items(texts: list[str]) -> list[str]:
    """Every item of ``--env`` values, each split at its commas, a value's own commas kept."""
    items: list[str] = []
    for text in texts:
        pieces = text.split(",")
        first = len(items)
        for piece in pieces:
            if len(items) > first and "=" in items[-1] and not _is_item(piece):
                items[-1] += "," + piece
            else:
                items.append(piece)
    return [item.strip() if "=" not in item else item.lstrip() for item in items if item.strip()]


def job_env(texts: list[str] | None, environ: dict[str, str]) -> dict[str, str]:
    """The variables to send for ``--env`` values ``texts`` (None: the default, ``all``)."""
    items = split_items(texts or [])
    none = any(item.lower() == "none" for item in items)
    env = {} if none else {k: v for k, v in environ.items() if k not in SECRETS}
    for item in items:
        low = item.lower()
        if low in ("all", "none"):
            continue
        if item.startswith("~"):
            name = item[1:].strip()
            if not _is_name(name):
                raise EnvError(f"--env {item!r}: expected ~NAME, a variable to leave out")
            env.pop(name, None)
            continue
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq and name.endswith("*") and _is_name(name[:-1]):
            env.update({k: v for k, v in environ.items() if k.startswith(name[:-1]) and k not in SECRETS})
            continue
        if not _is_name(name):
            raise EnvError(f"--env {item!r}: expected all, none, NAME=VALUE, NAME or ~NAME")
        if eq:
            env[name] = value
        elif name in environ and name not in SECRETS:
            env[name] = environ[name]
    return env


def check_size(env: dict[str, str], max_vars: int, max_bytes: int, max_value: int) -> None:
    """Refuse here, in one line that says what to do, what the API would refuse with a field dump
    (counted as the controller counts: characters of names and values)."""
    if len(env) > max_vars:
        raise EnvError(f"the environment has {len(env)} variables, more than the {max_vars} a job may carry: "
                       f"{_TOO_BIG}")
    size = sum(len(k) + len(v) for k, v in env.items())
    if size > max_bytes:
        biggest = max(env, key=lambda k: len(env[k]))
        raise EnvError(f"the environment is {size} characters, more than the {max_bytes} a job may carry (the "
                       f"largest variable is {biggest}): {_TOO_BIG}")
    for name, value in env.items():
        if len(value) > max_value:
            raise EnvError(f"variable {name} is {len(value)} characters, more than the {max_value} a job's "
                           f"variable may hold: {_TOO_BIG}")


def from_lsf(text: str) -> str:
    """bsub's ``-env``: ``none``, ``"all[, ~K][, K=V]"``, ``"K[=V], ..."`` read as LSF reads them: a
    list that does not start from ``all`` (or ``none``) is the whole environment the job gets."""
    items = [piece.strip() for piece in split_items([text])]
    if {item.lower() for item in items} & {"all", "none"}:
        return ",".join(items)
    return ",".join(["none", *items])


def from_slurm(text: str) -> str:
    """sbatch's ``--export``: ``ALL``, ``ALL,K=V``, ``NIL``, ``NONE``; variables named without ``ALL``
    are the only ones the job gets (plus Slurm's own, which the worker sets). ``NONE`` is sbatch(1)'s:
    only the submitter's ``SLURM_*`` variables; the rest is the job host's login defaults (the worker's
    base: the system's ``PATH``, the owner's ``HOME``, ``SHELL``, ``USER``)."""
    items = split_items([text])
    words = {item.lower() for item in items}
    if "none" in words and len(items) == 1:
        return "none,SLURM_*"
    if words & {"all", "none", "nil"}:
        return ",".join("none" if item.lower() == "nil" else item for item in items)
    return ",".join(["none", *items])
