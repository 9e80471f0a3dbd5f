"""Running a declared command in-process, for tests: what it printed and its exit status.

    result = invoke(XCE, ["sim", "run", "--workload", "t.swf", "--json"])
    assert result.exit_code == 0, result.output

The command line goes through the same dispatcher as ``xce`` itself (:func:`xce.cli.spec.run`):
``--help``, usage errors and exit statuses are exactly what a person sees.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """Both streams, stdout first (for assertion messages and "is it anywhere" checks)."""
        return self.stdout + self.stderr


def invoke(node, argv: list[str], prog: str | None = None) -> Result:
    """Run ``argv`` against a :class:`~xce.cli.spec.Program`, ``Group`` or ``Command``."""
    from xce.cli.spec import Program, run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        if isinstance(node, Program):
            code = node.run(list(argv))
        else:
            code = run(node, list(argv), prog or f"xce {node.name}")
    return Result(code, out.getvalue(), err.getvalue())
