"""LSF's command lines, read as LSF reads them: one dash for every option, long or short.

``-noheader``, ``-json`` and ``-oo`` are options of their own; one-letter flags may be written
together (``-aw``, ``-aJ NAME``: the last may take a value); a value may follow its option in the
same word (``-Jname``, ``-n4``). An option this program does not know is refused as LSF refuses
it: ``illegal option`` and the program's usage on standard error, exit 255 (LSF's ``exit(-1)``).
"""

from __future__ import annotations

import sys

#: LSF's exit status for a usage error, a job not found, a request refused.
EXIT_FAIL = 255
#: What ``lsid`` and ``-V`` print first: clients read the version from it (dask-jobqueue and the
#: snakemake plugin use ``-json`` output above 10.1.0.2).
VERSION = "IBM Spectrum LSF Standard 10.1.0.13, Apr 15 2022"


class Usage(Exception):
    """A command line the program cannot read; the message is LSF's first line (may be empty)."""


class Failed(Exception):
    """The request could not be done; each line of the message goes to standard error."""


def parse(argv: list[str], flags: frozenset[str] | set[str], valued: frozenset[str] | set[str], *,
          interspersed: bool = True) -> tuple[dict, list[str]]:
    """Options (a flag maps to how often it was given, a valued option to its list of values) and
    the words that are not options, in order. Without ``interspersed`` the first such word ends the
    options (bsub: the rest is the command and its own options)."""
    opts: dict = {}
    rest: list[str] = []
    i, n = 0, len(argv)
    while i < n:
        word = argv[i]
        i += 1
        if word == "--":
            rest += argv[i:]
            break
        if word[:1] != "-" or word == "-":
            rest.append(word)
            if not interspersed:
                rest += argv[i:]
                break
            continue
        name = word[1:]
        if name in flags:
            opts[name] = opts.get(name, 0) + 1
            continue
        if name in valued:
            if i >= n:
                raise Usage(f"option requires an argument -- {name}")
            opts.setdefault(name, []).append(argv[i])
            i += 1
            continue
        i = _combined(name, argv, i, flags, valued, opts)
    return opts, rest


def _combined(name: str, argv: list[str], i: int, flags, valued, opts: dict) -> int:
    """``-aJ NAME``, ``-pr``, ``-Jname``: letters that are flags, then at most one option with a value."""
    pos = 0
    while pos < len(name) and name[pos] in flags:
        opts[name[pos]] = opts.get(name[pos], 0) + 1
        pos += 1
    if pos == len(name):
        return i
    tail = name[pos:]
    for option in sorted((v for v in valued if tail.startswith(v)), key=len, reverse=True):
        value = tail[len(option):]
        if not value:
            if i >= len(argv):
                raise Usage(f"option requires an argument -- {option}")
            value = argv[i]
            i += 1
        opts.setdefault(option, []).append(value)
        return i
    raise Usage(f"illegal option -- {tail[0] if pos else name}")


def last(opts: dict, name: str, default: str | None = None) -> str | None:
    """The value an option was given last (LSF: a repeated option's last value wins)."""
    values = opts.get(name)
    return values[-1] if values else default


def usage_exit(prog: str, usage: str, first: str = "") -> int:
    if first:
        print(f"{prog}: {first}", file=sys.stderr)
    sys.stderr.write(usage.rstrip("\n") + "\n")
    return EXIT_FAIL


class Printable:
    """A program's standard output or error with other users' text made safe to print
    (:func:`xce.formats.printable`: a job's command, name, paths and reasons may hold ESC, CR, BEL...):
    every line any LSF program writes goes through it, whichever form wrote it."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        from xce.formats import printable

        return self.stream.write(printable(text, "\n"))

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def main_of(prog: str, usage: str, body):
    """``main(argv) -> int`` for a program: usage errors and refusals as LSF reports them, no
    traceback; what it prints made safe (:class:`Printable`)."""

    def main(argv: list[str]) -> int:
        out, err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = Printable(out), Printable(err)
        try:
            return _run(argv)
        finally:
            sys.stdout, sys.stderr = out, err

    def _run(argv: list[str]) -> int:
        if argv[:1] in (["-h"], ["-help"], ["--help"]):
            sys.stderr.write(usage.rstrip("\n") + "\n")
            return 0
        if argv[:1] in (["-V"], ["--version"]):
            print(VERSION, file=sys.stderr)
            return 0
        try:
            return body(argv) or 0
        except Usage as exc:
            return usage_exit(prog, usage, str(exc))
        except Failed as exc:
            sys.stderr.write(str(exc).rstrip("\n") + "\n")
            return EXIT_FAIL
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            return 141

    main.__doc__ = f"``{prog}``: ``argv`` without the program's name; the exit status."
    return main
