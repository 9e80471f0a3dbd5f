"""Every ``xce`` and ``xceadmin`` command is declared once, as data; parsing, ``--help``, usage errors
and shell completion are all read from that declaration, so they cannot disagree.

Why not typer, click or argparse: ``xce submit`` and ``xce jobs`` run in shell loops, and the
whole process must start, submit and exit in under 40 ms. typer costs ~130 ms of imports before a
command runs, click ~25 ms and argparse ~5 ms (plus its two-line usage errors and no completion).
This module imports only ``sys``; ``--help`` and completion import what they need when asked.

Declaring a command (a module listed in :data:`xce.cli.main.COMMANDS` or
:data:`xce.cli.admin.COMMANDS` exposes its commands in ``COMMAND_SPECS``)::

    def drain(host: str, reason: str | None, as_json: bool, url, token, state_dir) -> None:
        ...                                  # heavy imports inside, never at module level

    COMMAND_SPECS = [Command(
        "drain", "Close a host to new jobs.",
        [Arg("host", help="Host name."),
         Opt("reason", ("-r", "--reason"), help="Why, for the host's history."),
         JSON, *common_options()],
        drain, examples=("xce drain node07 -r 'disk replaced'",))]

* :class:`Opt` ``(name, flags, type=str, default=None, multiple=False, help="", min=None,
  show_default=True)`` and keyword-only ``max``, ``choices``, ``metavar``, ``required``,
  ``section`` (the ``--help`` heading it is listed under), ``env`` (an environment variable that
  gives the value when the option is not on the command line), ``negate`` (``("--no-plugins",)``
  stores False), ``const`` (a flag that stores that value: several such flags may share one
  ``name``, as ``bjobs -r``/``-p`` do), ``hidden``, ``complete`` (``"file"``, ``"dir"``, or a tuple
  of words). ``type`` is ``str``, ``int``, ``float``, ``bool`` (a flag) or any callable that turns
  the text into a value and raises ``ValueError`` with a message (``pathlib.Path``, a quantity
  parser). ``multiple=True`` collects every occurrence into a list (None when absent).
* :class:`Arg` ``(name, type=str, many=False, required=True, help="")``; only the last may be
  ``many``.
* :class:`Command` ``(name, help, params, run, interspersed=True, examples=())``: ``run`` gets
  every parameter as a keyword and may return an exit status. ``interspersed=False`` ends the
  options at the first positional word (``xce submit -q q sleep -x 1``).
* :class:`Group` ``(name, help, commands)`` for ``xce sim run``, ``xceadmin user add``.

The grammar is POSIX/GNU: ``-q X``, ``-qX``, ``--queue X``, ``--queue=X``, clustered flags
(``-al``), ``--`` ends the options, ``-h``/``--help`` anywhere before that; a flag may also be
declared as a word of several letters after one dash (bsub's ``-Is``), which then wins over the
same letters clustered. Every usage error is
one line on stderr naming the command and the option or argument, with exit status 2.
"""

from __future__ import annotations

import sys

EXIT_USAGE = 2
_MISSING = object()
HELP_FLAGS = ("-h", "--help")


class UsageError(Exception):
    """A command line that cannot be run; the message names what is wrong (exit status 2)."""

    def __init__(self, message: str, prog: str | None = None) -> None:
        super().__init__(message)
        self.prog = prog


class HelpRequested(Exception):
    """Help for ``node`` is due: ``--help`` (exit 0), or a group named without a command (exit 2)."""

    def __init__(self, node: "Command | Group", prog: str | None = None, code: int = 0) -> None:
        super().__init__(node.name)
        self.node, self.prog, self.code = node, prog, code


class Opt:
    __slots__ = ("name", "flags", "type", "default", "multiple", "help", "min", "show_default", "max", "choices",
                 "metavar", "required", "section", "negate", "const", "hidden", "complete", "env")

    def __init__(self, name: str, flags: tuple[str, ...], type=str, default=None, multiple: bool = False,
                 help: str = "", min=None, show_default: bool = True, *, max=None, choices=None,
                 metavar: str | None = None, required: bool = False, section: str | None = None,
                 negate: tuple[str, ...] = (), const=_MISSING, hidden: bool = False, complete=None,
                 env: str | None = None) -> None:
        self.name, self.flags, self.type, self.default = name, tuple(flags), type, default
        self.multiple, self.help, self.min, self.show_default = multiple, help, min, show_default
        self.max, self.choices, self.required, self.section = max, tuple(choices) if choices else None, required, section
        self.negate, self.const, self.hidden, self.complete = tuple(negate), const, hidden, complete
        self.env = env
        self.metavar = metavar or name.strip("_").upper().replace("_", "-")
        for f in (*self.flags, *self.negate):
            if not f.startswith("-") or f in ("-", "--") or (not f.startswith("--") and len(f) != 2
                                                              and not (type is bool and f[1:].isalpha())):
                raise ValueError(f"option {name}: {f!r} is not -X or --long (or a flag -Xy, as bsub's -Is)")

    @property
    def is_flag(self) -> bool:
        """Takes no value on the command line."""
        return self.type is bool or self.stores_const

    @property
    def stores_const(self) -> bool:
        """A flag that stores its ``const`` (bjobs' ``-r``/``-p``) rather than True or False."""
        return self.const is not _MISSING

    def __repr__(self) -> str:
        return f"Opt({self.name!r}, {self.flags!r})"


class Arg:
    __slots__ = ("name", "type", "many", "required", "help", "metavar", "choices", "complete")

    def __init__(self, name: str, type=str, many: bool = False, required: bool = True, help: str = "", *,
                 metavar: str | None = None, choices=None, complete=None) -> None:
        self.name, self.type, self.many, self.required, self.help = name, type, many, required, help
        self.metavar = metavar or name.strip("_").upper().replace("_", "-")
        self.choices = tuple(choices) if choices else None
        self.complete = complete

    def __repr__(self) -> str:
        return f"Arg({self.name!r})"


def _convert(kind, text: str, what: str, choices=None, low=None, high=None):
    if kind is str:
        value = text
    elif kind is int:
        try:
            value = int(text)
        except ValueError:
            raise UsageError(f"{what}: expected a whole number, got {text!r}") from None
    elif kind is float:
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"{what}: expected a number, got {text!r}") from None
        if value != value:
            raise UsageError(f"{what}: expected a number, got {text!r}")
    else:
        try:
            value = kind(text)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"{what}: {exc}") from None
    if choices is not None and value not in choices:
        raise UsageError(f"{what}: {text!r} is not one of: {', '.join(map(str, choices))}")
    if low is not None and value < low:
        raise UsageError(f"{what}: must be at least {low}, got {text}")
    if high is not None and value > high:
        raise UsageError(f"{what}: must be at most {high}, got {text}")
    return value


def path(text: str):
    """``type=path``: a :class:`pathlib.Path` (pathlib is imported only when such a value is given);
    completion offers file names for it."""
    from pathlib import Path

    if not text:
        raise ValueError("expected a path, got an empty string")
    return Path(text)


#: What ``xce.logs`` accepts (kept here so that parsing a service's command line imports no logging set-up).
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
LOG_FORMATS = ("text", "json")


def upper(text: str) -> str:
    """``type=upper`` with ``choices``: case-insensitive words (log levels, states)."""
    return text.upper()


def _looks_negative(word: str) -> bool:
    return len(word) > 1 and word[0] == "-" and (word[1].isdigit() or word[1] == ".")


class Command:
    def __init__(self, name: str, help: str, params: list, run, interspersed: bool = True,
                 examples: tuple[str, ...] = (), *, epilog: str = "", hidden: bool = False,
                 usage: str | None = None, quick_exit: bool = False) -> None:
        self.name, self.help, self.params, self.run = name, help, list(params), run
        self.interspersed, self.examples, self.epilog, self.hidden = interspersed, tuple(examples), epilog, hidden
        self.usage = usage
        #: End the process with os._exit once the output is flushed: the interpreter's own teardown
        #: costs a short client command (xce submit) as much as its imports. Only for commands that
        #: leave nothing behind (no threads, no files of their own, no atexit work).
        self.quick_exit = quick_exit
        self._by_flag: dict[str, Opt] = {}
        self._negated: set[str] = set()
        names: dict[str, object] = {}
        for p in self.params:
            prev = names.get(p.name)
            if prev is not None and not (isinstance(p, Opt) and isinstance(prev, Opt) and p.stores_const
                                         and prev.stores_const):
                raise ValueError(f"command {name}: two parameters named {p.name!r}")
            names[p.name] = p
            if isinstance(p, Opt):
                for f in (*p.flags, *p.negate):
                    if f in self._by_flag:
                        raise ValueError(f"command {name}: {f} declared twice")
                    self._by_flag[f] = p
                self._negated.update(p.negate)
        args = self.args
        if any(a.many for a in args[:-1]):
            raise ValueError(f"command {name}: only the last argument may take many words")
        self._digit_flags = any(f[1:].isdigit() for f in self._by_flag if not f.startswith("--"))

    @property
    def args(self) -> list[Arg]:
        return [p for p in self.params if isinstance(p, Arg)]

    @property
    def options(self) -> list[Opt]:
        return [p for p in self.params if isinstance(p, Opt)]

    @property
    def help_flags(self) -> list[str]:
        """The words of :data:`HELP_FLAGS` that ask for this command's help (none it declares itself)."""
        return [f for f in HELP_FLAGS if f not in self._by_flag]

    def _help_flag(self, word: str) -> bool:
        return word in HELP_FLAGS and word not in self._by_flag

    # -- parsing -----------------------------------------------------------------------------

    def parse(self, argv: list[str]) -> dict:
        """The keyword arguments of ``run`` for ``argv``; UsageError or HelpRequested otherwise."""
        values: dict = {}
        positional: list[str] = []
        i, n = 0, len(argv)
        options_done = False
        by_flag = self._by_flag
        while i < n:
            word = argv[i]
            i += 1
            if options_done or word == "-" or word[:1] != "-" or (_looks_negative(word) and not self._digit_flags):
                positional.append(word)
                if not self.interspersed:
                    options_done = True
                continue
            if word == "--":
                options_done = True
                continue
            if self._help_flag(word):
                raise HelpRequested(self)
            if word[1] == "-":
                flag, eq, inline = word.partition("=")
                opt = by_flag.get(flag)
                if opt is None:
                    raise UsageError(f"no such option: {flag}{self._suggest(flag)}")
                if opt.is_flag:
                    if eq:
                        raise UsageError(f"{flag} takes no value (got {word!r})")
                    self._flag(values, opt, flag)
                    continue
                if not eq:
                    if i >= n:
                        raise UsageError(f"{flag} needs a value ({opt.metavar})")
                    inline = argv[i]
                    i += 1
                self._store(values, opt, flag, inline)
                continue
            whole = by_flag.get(word)
            if whole is not None and whole.is_flag and len(word) > 2:  # bsub's own multi-letter flags: -Is
                self._flag(values, whole, word)
                continue
            for j in range(1, len(word)):  # -x, -xVALUE, -abc
                flag = "-" + word[j]
                opt = by_flag.get(flag)
                if opt is None:
                    raise UsageError(f"no such option: {flag}" + (f" (in {word})" if len(word) > 2 else ""))
                if opt.is_flag:
                    self._flag(values, opt, flag)
                    continue
                value = word[j + 1:]
                if not value:
                    if i >= n:
                        raise UsageError(f"{flag} needs a value ({opt.metavar})")
                    value = argv[i]
                    i += 1
                self._store(values, opt, flag, value)
                break
        for a in self.args:
            if a.many:
                taken, positional = positional, []
            else:
                taken, positional = positional[:1], positional[1:]
            if a.required and not taken:
                raise UsageError(f"missing {a.metavar}{'...' if a.many else ''}")
            converted = [_convert(a.type, t, a.metavar, a.choices) for t in taken]
            values[a.name] = (converted or None) if a.many else (converted[0] if converted else None)
        if positional:
            raise UsageError(f"unexpected argument {positional[0]!r}")
        for p in self.params:
            if p.name in values:
                continue
            if isinstance(p, Opt) and p.env and not p.is_flag:
                import os

                text = os.environ.get(p.env)
                if text:
                    values[p.name] = _convert(p.type, text, f"${p.env}", p.choices, p.min, p.max)
                    continue
            if isinstance(p, Opt) and p.required:
                raise UsageError(f"missing option {p.flags[0]} {p.metavar}")
            values[p.name] = None if isinstance(p, Arg) or p.multiple else p.default
        return values

    def _flag(self, values: dict, opt: Opt, flag: str) -> None:
        if opt.stores_const:
            value = opt.const
        else:
            value = flag not in self._negated
        if opt.multiple:
            values.setdefault(opt.name, []).append(value)
        else:
            values[opt.name] = value

    def _store(self, values: dict, opt: Opt, flag: str, text: str) -> None:
        value = _convert(opt.type, text, flag, opt.choices, opt.min, opt.max)
        if opt.multiple:
            values.setdefault(opt.name, []).append(value)
        else:
            values[opt.name] = value

    def _suggest(self, flag: str) -> str:
        from difflib import get_close_matches

        close = get_close_matches(flag, [f for f in self._by_flag if f.startswith("--")], n=1, cutoff=0.7)
        return f" (did you mean {close[0]}?)" if close else ""

    def invoke(self, argv: list[str]) -> int:
        code = self.run(**self.parse(argv))
        return code if isinstance(code, int) else 0

    # -- help --------------------------------------------------------------------------------

    def summary(self) -> str:
        return self.help.strip().split("\n\n")[0].replace("\n", " ")

    def usage_line(self, prog: str) -> str:
        if self.usage is not None:
            return f"{prog} {self.usage}"
        parts = [prog, "[OPTIONS]"] if any(not o.hidden for o in self.options) else [prog]
        for o in self.options:
            if o.required:
                parts.append(f"{o.flags[0]} {o.metavar}")
        args = self.args
        if args and not self.interspersed:
            parts.append("[--]")
        for a in args:
            word = a.metavar + ("..." if a.many else "")
            parts.append(word if a.required else f"[{word}]")
        return " ".join(parts)

    def help_text(self, prog: str) -> str:
        from xce.cli import helptext

        return helptext.command(self, prog)


class Group:
    """Commands under one name (``xce sim run``); ``commands`` may hold further groups."""

    def __init__(self, name: str, help: str, commands: list, examples: tuple[str, ...] = (), *,
                 hidden: bool = False) -> None:
        self.name, self.help, self.examples, self.hidden = name, help, tuple(examples), hidden
        self._commands = {c.name: c for c in commands}

    def children(self) -> dict:
        return self._commands

    def add(self, node: "Command | Group") -> None:
        self._commands[node.name] = node

    def child(self, name: str):
        return self._commands.get(name)

    def summary(self) -> str:
        return self.help.strip().split("\n\n")[0].replace("\n", " ")

    def help_text(self, prog: str) -> str:
        from xce.cli import helptext

        return helptext.group(self, prog)


class Program(Group):
    """A top-level command (``xce``, ``xceadmin``) whose commands live in lazily imported modules.

    ``modules`` maps each command name to the module that declares it in ``COMMAND_SPECS``, so a
    command line imports only its own module; ``--help`` and completion import all of them.
    """

    def __init__(self, name: str, help: str, modules: dict[str, str], examples: tuple[str, ...] = ()) -> None:
        super().__init__(name, help, [], examples)
        self.modules = modules
        self._loaded: set[str] = set()

    def child(self, name: str):
        module = self.modules.get(name)
        if module is None:
            return None
        self._load(module)
        return self._commands.get(name)

    def children(self) -> dict:
        for module in dict.fromkeys(self.modules.values()):
            self._load(module)
        return {name: self._commands[name] for name in self.modules if name in self._commands}

    def _load(self, module: str) -> None:
        if module in self._loaded:
            return
        self._loaded.add(module)
        import importlib

        for node in getattr(importlib.import_module(module), "COMMAND_SPECS", ()):
            if node.name in self.modules:
                self._commands[node.name] = node

    def run(self, argv: list[str]) -> int:
        """Run a command line; returns the exit status (never raises SystemExit)."""
        return run(self, argv, self.name)

    def main(self, argv: list[str] | None = None) -> None:
        args = sys.argv[1:] if argv is None else argv
        code = self.run(args)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            pass
        node = self.child(args[0]) if args and not args[0].startswith("-") else None
        if isinstance(node, Command) and node.quick_exit:
            import os

            os._exit(code)
        raise SystemExit(code)


def run(node: "Command | Group", argv: list[str], prog: str) -> int:
    """Run ``argv`` against a command or a group: the exit status, with ``--help`` and usage errors
    answered here (help on stdout; one line on stderr, status 2)."""
    full = prog
    try:
        if isinstance(node, Group):
            node, argv, full = resolve(node, argv, prog)
        return node.invoke(argv)
    except HelpRequested as h:
        sys.stdout.write(h.node.help_text(h.prog or full))
        return h.code
    except UsageError as exc:
        where = exc.prog or full
        sys.stderr.write(f"{where}: {exc} (see '{where} --help')\n")
        return EXIT_USAGE
    except SystemExit as exc:
        code = exc.code
        if code is None or isinstance(code, int):
            return code or 0
        sys.stderr.write(f"{code}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return 130
    except BrokenPipeError:  # `xce jobs | head`
        return 0


def resolve(group: Group, argv: list[str], prog: str):
    """Walk group names in ``argv``: the command to run, the rest of the words, its full name."""
    node: Group | Command = group
    i = 0
    while isinstance(node, Group):
        if i >= len(argv):
            raise HelpRequested(node, prog, EXIT_USAGE)
        word = argv[i]
        if word in HELP_FLAGS:
            raise HelpRequested(node, prog)
        if word == "--version" and isinstance(node, Program):
            from xce import __version__

            sys.stdout.write(f"{node.name} {__version__}\n")
            raise SystemExit(0)
        if word.startswith("-"):
            raise UsageError(f"no such option: {word} (options go after the command name)", prog)
        nxt = node.child(word)
        if nxt is None:
            raise UsageError(f"no such command {word!r}{_suggest_command(node, word)}", prog)
        node = nxt
        prog = f"{prog} {word}"
        i += 1
    return node, argv[i:], prog


def _suggest_command(group: Group, word: str) -> str:
    from difflib import get_close_matches

    close = get_close_matches(word, [n for n, c in group.children().items() if not c.hidden], n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def standalone(node: "Command | Group", prog: str, argv: list[str] | None = None) -> None:
    """``python -m xce.cli.scheduler_cmd ...``: one declared command or group as a program of its own."""
    raise SystemExit(run(node, sys.argv[1:] if argv is None else argv, prog))


def common_options() -> list[Opt]:
    """``--url``, ``--token``, ``--state-dir`` (see :mod:`xce.cli.client` for the defaults)."""
    return [
        Opt("url", ("--url",), help="Controller URL [env XCE_URL; default from the state dir]", show_default=False,
            section="Connection"),
        Opt("token", ("--token",), help="Bearer token [env XCE_TOKEN; default from the state dir]",
            show_default=False, section="Connection"),
        Opt("state_dir", ("--state-dir",), help="State directory [env XCE_STATE_DIR; ~/.xce]", show_default=False,
            section="Connection", complete="dir"),
    ]


JSON = Opt("as_json", ("--json",), bool, False, help="Print JSON for scripts instead of a table.")
