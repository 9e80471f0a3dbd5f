"""``xce submit script.sh``: options written in the script's leading comment block, as ``bsub <
script`` and ``sbatch script`` read them.

Lines ``#XCE OPTIONS`` carry ``xce submit`` options as typed; ``#BSUB`` and ``#SBATCH`` lines carry
LSF's and Slurm's options, read by the same table and parser as ``bsub``'s and ``sbatch``'s command
lines (:mod:`xce.compat.lsf.options`, :mod:`xce.compat.slurm.options`), so an option accepted on
one is accepted in the other, with the same effect or the same refusal. The block ends at the
first line that is neither a comment nor blank. Options given on the command line win over the
script's; within the script a later line wins over an earlier one, except for the options that
may be given many times (``-R``, ``--env``, ``--record`` ...), whose lines add up. Only ``shlex``
and the two tables are imported, and only when a script is given.
"""

from __future__ import annotations

from xce.cli.jobscript import Refused


def translate_bsub(words: list[str]) -> list[str]:
    """One ``#BSUB`` line as xce submit words (:mod:`xce.compat.lsf.options`, bsub's one table)."""
    from xce.compat.lsf.options import directive

    return directive(words)


def translate_sbatch(words: list[str]) -> list[str]:
    """One ``#SBATCH`` line as xce submit words (:mod:`xce.compat.slurm.options`, sbatch's one table)."""
    from xce.compat.slurm.options import directive

    return directive(words)


def directives(text: str) -> list[tuple[int, str, list[str]]]:
    """The leading block's directives as xce submit arguments: (line number, kind, words)."""
    import shlex

    found = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        # A directive starts its line, as sbatch reads it (``xstrncmp(line, "#SBATCH", 7)``) and LSF asks
        # ("#BSUB at the beginning of each line"); an indented one is a comment: ipyparallel's LSF
        # template indents a ``#BSUB -J`` that, read, would undo the job array it puts at column 0.
        for prefix, translate in (("#XCE", None), ("#BSUB", translate_bsub), ("#SBATCH", translate_sbatch)):
            if line.startswith(prefix) and (len(stripped) == len(prefix) or line[len(prefix)].isspace()):
                try:
                    words = shlex.split(stripped[len(prefix):], comments=translate is not None)
                    found.append((number, prefix[1:], words if translate is None else translate(words)))
                except ValueError as exc:
                    raise Refused(f"line {number}: {exc}") from None
                break
    return found


def merge(spec, given: dict, text: str) -> dict:
    """``given`` (the command line's values) completed with the script's directives: a value the
    command line left at its default is taken from the script; the lines of a repeatable option
    add up. A script with ``#SBATCH`` lines writes its output files as sbatch does (truncated)."""
    from xce.cli.spec import UsageError

    opts = {o.name: o for o in spec.params if getattr(o, "flags", None) is not None}
    from_script: dict = {}
    slurm = False
    for number, kind, words in directives(text):
        slurm = slurm or kind == "SBATCH"
        try:
            parsed = spec.parse([*words, "--", "x"])
        except UsageError as exc:
            raise Refused(f"line {number}: {exc}") from None
        for name, opt in opts.items():
            if parsed[name] == opt.default:
                continue
            if opt.multiple:
                from_script[name] = from_script.get(name, []) + parsed[name]
            else:
                from_script[name] = parsed[name]
    if slurm and "open_mode" in opts:
        from_script.setdefault("open_mode", "truncate")
    out = dict(given)
    for name, value in from_script.items():
        if given.get(name) == opts[name].default:
            out[name] = value
    return out
