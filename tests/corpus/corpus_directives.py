"""Reading a job script's directive block as Slurm's ``sbatch`` and LSF's ``bsub`` read it, independently
of XCE's own reader, so that the corpus test checks XCE against the real programs' rules and not
against itself.

The rules, from the programs' documentation:

- ``sbatch`` reads ``#SBATCH`` lines until the first line that is neither a comment nor blank; a line
  is split like a shell line and ends at an unquoted ``#`` that starts a word (``# comment``); long
  options take ``--opt=value`` or ``--opt value`` and may be shortened to an unambiguous prefix;
  short options take ``-o value`` or ``-ovalue``. ``#SBATCH`` must be followed by white space
  (``#SBATCH--x`` and ``##SBATCH`` are comments; so is a misspelt ``#SBTACH``).
- ``bsub < script`` reads ``#BSUB`` lines in the same leading block; one line may carry several
  options (``-W 15 -n 1,1``); a value may be attached to its option (``-n2``, ``-W30``, ``-M1000``),
  the longest option name matching first (``-nnodes`` before ``-n``, ``-oo`` before ``-o``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

#: sbatch's long options and whether each takes a value (True), none (False), or one only after
#: ``=`` ("optional"). From ``man sbatch``; every option a job script is likely to carry.
SBATCH_LONG = {
    "account": True, "acctg-freq": True, "array": True, "batch": True, "bb": True, "begin": True,
    "chdir": True, "cluster-constraint": True, "clusters": True, "comment": True, "constraint": True,
    "container": True, "contiguous": False, "core-spec": True, "cores-per-socket": True, "cpu-freq": True,
    "cpus-per-gpu": True, "cpus-per-task": True, "deadline": True, "delay-boot": True, "dependency": True,
    "distribution": True, "error": True, "exclude": True, "exclusive": "optional", "export": True,
    "export-file": True, "extra-node-info": True, "get-user-env": "optional", "gid": True, "gpu-bind": True,
    "gpu-freq": True, "gpus": True, "gpus-per-node": True, "gpus-per-socket": True, "gpus-per-task": True,
    "gres": True, "gres-flags": True, "hint": True, "hold": False, "ignore-pbs": False, "input": True,
    "job-name": True, "kill-on-invalid-dep": True, "licenses": True, "mail-type": True, "mail-user": True,
    "mcs-label": True, "mem": True, "mem-bind": True, "mem-per-cpu": True, "mem-per-gpu": True,
    "mincpus": True, "network": True, "nice": "optional", "no-kill": "optional", "no-requeue": False,
    "nodefile": True, "nodelist": True, "nodes": True, "ntasks": True, "ntasks-per-core": True,
    "ntasks-per-gpu": True, "ntasks-per-node": True, "ntasks-per-socket": True, "open-mode": True,
    "output": True, "overcommit": False, "oversubscribe": False, "parsable": False, "partition": True,
    "power": True, "prefer": True, "priority": True, "profile": True, "propagate": "optional", "qos": True,
    "quiet": False, "reboot": False, "requeue": False, "reservation": True, "signal": True,
    "sockets-per-node": True, "spread-job": False, "switches": True, "test-only": False,
    "thread-spec": True, "threads-per-core": True, "time": True, "time-min": True, "tmp": True,
    "tres-per-task": True, "uid": True, "use-min-nodes": False, "verbose": False, "wait": False,
    "wait-all-nodes": True, "wckey": True, "wrap": True,
}
#: ``--tasks-per-node`` is Slurm's old spelling of ``--ntasks-per-node``.
SBATCH_ALIASES = {"tasks-per-node": "ntasks-per-node"}
SBATCH_SHORT = {
    "A": "account", "a": "array", "B": "extra-node-info", "b": "begin", "C": "constraint", "c": "cpus-per-task",
    "D": "chdir", "d": "dependency", "e": "error", "F": "nodefile", "G": "gpus", "H": "hold", "i": "input",
    "J": "job-name", "k": "no-kill", "L": "licenses", "M": "clusters", "m": "distribution", "N": "nodes",
    "n": "ntasks", "O": "overcommit", "o": "output", "p": "partition", "Q": "quiet", "q": "qos",
    "S": "core-spec", "s": "oversubscribe", "t": "time", "v": "verbose", "W": "wait", "w": "nodelist",
    "x": "exclude",
}

#: bsub's options and whether each takes a value. From the bsub reference.
BSUB_OPTIONS = {
    "-a": True, "-alloc_flags": True, "-app": True, "-B": False, "-b": True, "-C": True, "-c": True,
    "-cwd": True, "-D": True, "-E": True, "-e": True, "-env": True, "-eo": True, "-eptl": True, "-F": True,
    "-f": True, "-G": True, "-g": True, "-gpu": True, "-H": False, "-hl": False, "-i": True, "-J": True,
    "-Jd": True, "-jsdl": True, "-k": True, "-L": True, "-Lp": True, "-M": True, "-m": True, "-N": False,
    "-Ne": False, "-n": True, "-nnodes": True, "-o": True, "-oo": True, "-outdir": True, "-P": True,
    "-p": True, "-ptl": True, "-Q": True, "-q": True, "-R": True, "-r": False, "-rn": False, "-rnc": True,
    "-S": True, "-s": True, "-sla": True, "-sp": True, "-T": True, "-t": True, "-U": True, "-u": True,
    "-ul": False, "-v": True, "-W": True, "-We": True, "-w": True, "-wa": True, "-wt": True, "-x": False,
    "-XF": False, "-Zs": False,
}


@dataclass(frozen=True)
class Directive:
    """One option of one directive line: ``option`` is its canonical name (``--mem``, ``-n``)."""

    kind: str  # "sbatch" or "bsub"
    line: int
    option: str
    value: str | None
    text: str  # the option as written, for messages

    def __str__(self) -> str:
        return f"line {self.line}: {self.text}"


class Unreadable(ValueError):
    """A directive line the real program would refuse (its message says which)."""


def _words(rest: str, line: int) -> list[str]:
    lexer = shlex.shlex(rest, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError as exc:
        raise Unreadable(f"line {line}: {exc}") from None


def _block(text: str, prefix: str) -> list[tuple[int, str]]:
    """The directive lines (number, text after the prefix) of the leading comment block."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if not line.startswith("#"):
            break
        if line.startswith(prefix) and (len(line) == len(prefix) or line[len(prefix)].isspace()):
            out.append((number, line[len(prefix):]))
    return out


def _long(name: str) -> str:
    name = SBATCH_ALIASES.get(name, name)
    if name in SBATCH_LONG:
        return name
    matches = sorted({SBATCH_ALIASES.get(n, n) for n in (*SBATCH_LONG, *SBATCH_ALIASES) if n.startswith(name)})
    if len(matches) == 1:
        return matches[0]
    raise Unreadable(f"--{name}: {'ambiguous' if matches else 'not an sbatch option'}")


def sbatch(text: str) -> list[Directive]:
    out = []
    for number, rest in _block(text, "#SBATCH"):
        words = _words(rest, number)
        i = 0
        while i < len(words):
            word = words[i]
            i += 1
            if word.startswith("--"):
                name, eq, value = word[2:].partition("=")
                name = _long(name)
                takes = SBATCH_LONG[name]
                if takes is True and not eq:
                    if i >= len(words):
                        raise Unreadable(f"line {number}: --{name} needs a value")
                    value, i = words[i], i + 1
                    shown = f"--{name} {value}"
                else:
                    shown = word
                out.append(Directive("sbatch", number, "--" + name, value if (eq or takes is True) else None, shown))
            elif word.startswith("-") and len(word) > 1 and word[1] in SBATCH_SHORT:
                name = SBATCH_SHORT[word[1]]
                takes = SBATCH_LONG[name]
                value = word[2:]
                if takes is True and not value:
                    if i >= len(words):
                        raise Unreadable(f"line {number}: -{word[1]} needs a value")
                    value, i = words[i], i + 1
                out.append(Directive("sbatch", number, "--" + name, value if takes else None,
                                     f"{word} {value}".strip() if takes and not word[2:] else word))
            else:
                raise Unreadable(f"line {number}: {word!r} is not an option")
    return out


def bsub(text: str) -> list[Directive]:
    out = []
    names = sorted(BSUB_OPTIONS, key=len, reverse=True)
    for number, rest in _block(text, "#BSUB"):
        words = _words(rest, number)
        i = 0
        while i < len(words):
            word = words[i]
            i += 1
            name = word if word in BSUB_OPTIONS else next(
                (n for n in names if BSUB_OPTIONS[n] and word.startswith(n) and len(word) > len(n)), None)
            if name is None:
                raise Unreadable(f"line {number}: {word!r} is not a bsub option")
            if not BSUB_OPTIONS[name]:
                out.append(Directive("bsub", number, name, None, word))
                continue
            if word != name:
                value, shown = word[len(name):], word
            else:
                if i >= len(words):
                    raise Unreadable(f"line {number}: {name} needs a value")
                value, i = words[i], i + 1
                shown = f"{name} {value}"
            out.append(Directive("bsub", number, name, value, shown))
    return out


def read(kind: str, text: str) -> list[Directive]:
    return sbatch(text) if kind == "sbatch" else bsub(text)
