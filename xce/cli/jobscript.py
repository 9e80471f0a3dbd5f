"""``xce submit script.sh``: options written in the script's leading comment block, as ``bsub <
script`` and ``sbatch script`` read them.

Lines ``#XCE OPTIONS`` carry ``xce submit`` options as typed; ``#BSUB`` and ``#SBATCH`` lines carry
LSF's and Slurm's options, each translated to its XCE spelling (an option with no XCE counterpart is
an error naming the line, never silently dropped). The block ends at the first line that is neither
a comment nor blank. Options given on the command line win over the script's; within the script a
later line wins over an earlier one. Only ``shlex`` is imported, and only when a script is given.
"""

from __future__ import annotations

#: LSF's bsub options and the xce submit option each one is (same letters where XCE kept them).
BSUB = {"-J": "-J", "-q": "-q", "-n": "-n", "-R": "-R", "-P": "-P", "-o": "-o", "-e": "-e", "-W": "-W",
        "-b": "-b", "-w": "-w", "-sp": "--priority", "-cwd": "--cwd", "-H": "-H"}
#: Slurm's sbatch options (short and long) and their xce submit spelling.
SBATCH = {"-J": "-J", "--job-name": "-J", "-p": "-q", "--partition": "-q", "-n": "-n", "--ntasks": "-n",
          "-o": "-o", "--output": "-o", "-e": "-e", "--error": "-e", "-t": "--time", "--time": "--time",
          "-a": "--array", "--array": "--array", "-d": "--dependency", "--dependency": "--dependency",
          "-H": "-H", "--hold": "-H", "--begin": "-b", "-D": "--cwd", "--chdir": "--cwd", "-A": "-P",
          "--account": "-P"}
_FLAGS = frozenset({"-H", "--hold"})


def _translate(words: list[str], table: dict[str, str], kind: str) -> list[str]:
    out, i = [], 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
        if name not in table:
            raise ValueError(f"{kind} option {name!r} has no xce submit counterpart (known: "
                             f"{', '.join(sorted(table))})")
        out.append(table[name])
        if name in _FLAGS:
            i += 1
            continue
        if eq:
            out.append(value)
            i += 1
        elif i + 1 < len(words):
            out.append(words[i + 1])
            i += 2
        else:
            raise ValueError(f"{kind} option {name} needs a value")
    return out


def directives(text: str) -> list[tuple[int, list[str]]]:
    """The leading block's directives as xce submit arguments, with their line numbers."""
    import shlex

    found = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        for prefix, table in (("#XCE", None), ("#BSUB", BSUB), ("#SBATCH", SBATCH)):
            if stripped.startswith(prefix) and (len(stripped) == len(prefix) or stripped[len(prefix)].isspace()):
                try:
                    words = shlex.split(stripped[len(prefix):], comments=False)
                    found.append((number, words if table is None else _translate(words, table, prefix[1:])))
                except ValueError as exc:
                    raise ValueError(f"line {number}: {exc}") from None
                break
    return found


def merge(spec, given: dict, path: str, text: str) -> dict:
    """``given`` (the command line's values) completed with the script's directives: a value the
    command line left at its default is taken from the script."""
    from xce.cli.spec import UsageError

    from_script: dict = {}
    for number, words in directives(text):
        try:
            parsed = spec.parse([*words, "--", "x"])
        except UsageError as exc:
            raise ValueError(f"line {number}: {exc}") from None
        for opt in spec.params:
            if getattr(opt, "flags", None) is None or opt.name in ("command",):
                continue
            if parsed[opt.name] != opt.default:
                from_script[opt.name] = parsed[opt.name]
    out = dict(given)
    for name, value in from_script.items():
        opt = next(o for o in spec.params if getattr(o, "flags", None) is not None and o.name == name)
        if given.get(name) == opt.default:
            out[name] = value
    return out
