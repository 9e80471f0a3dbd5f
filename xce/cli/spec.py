"""Client commands declared once, run through typer or through a fast parser.

Why: typer (0.29 here) costs ~130 ms before a command even runs (it imports pydantic and builds a
validator per parameter; older releases import rich's markdown instead), more than the whole
budget of ``xce submit`` / ``xce jobs``, which people run in shell loops. So the commands that
talk to the controller are declared as a :class:`Command` (plain data, no typer import) from which

* :meth:`Command.register` builds the typer command (``--help``, completion, error messages), and
* :meth:`Command.parse` reads a well-formed command line directly, in microseconds.

The fast parser understands exactly the common shapes (``-q X``, ``--queue X``, ``--queue=X``,
flags, repeated options, ``--``); for anything else (``--help``, a bad value, an unknown option,
``-qX``) it returns None and the command line goes to typer, which parses it or explains the
mistake with exit code 2. A test checks that both parsers give the same values.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class Opt:
    name: str
    flags: tuple[str, ...]
    type: type = str
    default: Any = None
    multiple: bool = False
    help: str = ""
    min: int | None = None
    show_default: bool = True

    @property
    def is_flag(self) -> bool:
        return self.type is bool


@dataclass(frozen=True)
class Arg:
    name: str
    type: type = str
    many: bool = False
    required: bool = True
    help: str = ""


@dataclass
class Command:
    name: str
    help: str
    params: list[Opt | Arg]
    run: Callable[..., None]
    #: False: the first positional word ends the options (``xce submit -q q sleep -x 1``).
    interspersed: bool = True
    #: Command lines shown under "Examples" in ``--help``.
    examples: tuple[str, ...] = ()
    _by_flag: dict[str, Opt] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for p in self.params:
            if isinstance(p, Opt):
                for f in p.flags:
                    self._by_flag[f] = p

    # -- the fast path -----------------------------------------------------------------------

    def parse(self, argv: list[str]) -> dict[str, Any] | None:
        """The keyword arguments of ``run`` for ``argv``, or None to let typer handle it."""
        values: dict[str, Any] = {}
        positional: list[str] = []
        i, n = 0, len(argv)
        options_done = False
        while i < n:
            word = argv[i]
            i += 1
            if options_done or word == "-" or not word.startswith("-"):
                positional.append(word)
                if not self.interspersed:
                    options_done = True
                continue
            if word == "--":
                options_done = True
                continue
            flag, eq, inline = word.partition("=")
            opt = self._by_flag.get(flag)
            if opt is None or (eq and not flag.startswith("--")):
                return None
            if opt.is_flag:
                if eq:
                    return None
                values[opt.name] = True
                continue
            if not eq:
                if i >= n:
                    return None
                inline = argv[i]
                i += 1
            value = self._convert(opt.type, inline)
            if value is None or (opt.min is not None and value < opt.min):
                return None
            if opt.multiple:
                values.setdefault(opt.name, []).append(value)
            else:
                values[opt.name] = value
        args = [p for p in self.params if isinstance(p, Arg)]
        for a in args:
            if a.many:
                taken, positional = positional, []
            else:
                taken, positional = positional[:1], positional[1:]
            if a.required and not taken:
                return None
            converted = [self._convert(a.type, t) for t in taken]
            if any(c is None for c in converted):
                return None
            values[a.name] = (converted or None) if a.many else (converted[0] if converted else None)
        if positional:
            return None
        for p in self.params:
            if p.name not in values:
                values[p.name] = None if isinstance(p, Arg) or p.multiple else p.default
        return values

    @staticmethod
    def _convert(kind: type, text: str) -> Any:
        if kind is int:
            try:
                return int(text)
            except ValueError:
                return None
        if kind is float:
            try:
                return float(text)
            except ValueError:
                return None
        return text

    # -- typer ---------------------------------------------------------------------------------

    def register(self, app, run: Callable[..., None] | None = None) -> None:
        """Add this command to a typer app (``run`` replaces the action, for tests)."""
        from typing import Annotated, Optional

        import typer

        action = run or self.run
        parameters = []
        for p in self.params:
            if isinstance(p, Arg):
                kind = list[p.type] if p.many else p.type
                if not p.required:
                    kind = Optional[kind]
                info = typer.Argument(help=p.help, show_default=False)
                default = inspect.Parameter.empty if p.required else None
            else:
                if p.is_flag:
                    kind = bool
                elif p.multiple:
                    kind = Optional[list[p.type]]
                else:
                    kind = p.type if p.default is not None else Optional[p.type]
                info = typer.Option(*p.flags, help=p.help, min=p.min, show_default=p.show_default)
                default = None if p.multiple else p.default
            parameters.append(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                                annotation=Annotated[kind, info]))

        def command(**kwargs: Any) -> None:
            action(**kwargs)

        command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        command.__doc__ = self.help
        settings = {} if self.interspersed else {"allow_interspersed_args": False}
        app.command(self.name, help=self.help, context_settings=settings,
                    epilog=examples_epilog(*self.examples))(command)


def common_options() -> list[Opt]:
    """``--url``, ``--token``, ``--state-dir`` (see :mod:`xce.cli.client` for the defaults)."""
    return [
        Opt("url", ("--url",), help="Controller URL [env XCE_URL; default from the state dir]", show_default=False),
        Opt("token", ("--token",), help="Bearer token [env XCE_TOKEN; default from the state dir]",
            show_default=False),
        Opt("state_dir", ("--state-dir",), help="State directory [env XCE_STATE_DIR; ~/.xce]", show_default=False),
    ]


JSON = Opt("as_json", ("--json",), bool, False, help="Print JSON for scripts instead of a table.")


def examples_epilog(*lines: str) -> str | None:
    """An "Examples" block for ``--help`` that click prints as written (``\b`` stops re-wrapping)."""
    if not lines:
        return None
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
