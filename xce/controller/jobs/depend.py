"""Job dependencies, as LSF writes them: ``-w 'done(12) && (exit(14, 1) || ended(prep))'``.

Grammar (``||`` binds looser than ``&&``, ``!`` tightest; a bare job is ``done(job)`` as in LSF)::

    expr  := and ('||' and)*
    and   := unary ('&&' unary)*
    unary := '!' unary | '(' expr ')' | cond
    cond  := ('done' | 'exit' | 'ended' | 'started') '(' JOB [',' [OP] CODE] ')' | JOB | 'singleton()'
    JOB   := 12 | 12[3] | 12[1-5] | NAME | NAME[3] | "NAME" | "NAME[3]"   (xce.jobref)
           | NAME* (every job whose name begins NAME) | 12[*] | NAME[*] (element by element)
    OP    := == | != | > | >= | < | <=                                (exit only; default ==)

Slurm's ``--dependency=afterok:12:13,afterany:14`` is translated to this language first
(:func:`xce.jobref.from_slurm`: ``after`` -> started, ``afterok`` -> done, ``afternotok`` -> exit,
``afterany`` -> ended; ``,`` -> ``&&``, ``?`` -> ``||``; ``singleton`` -> ``singleton()``: after every
unfinished job of the user's that has this job's name, as Slurm's ``--dependency=singleton``).

A name with a space or one of ``( ) & | ! ,`` (names may hold any of them, :func:`xce.jobref.check_name`)
is written in double quotes, ``done("fit (v2)[3]")``: unquoted, those characters are the grammar's. A
name holding ``"`` cannot be written here; its job id can.

At submission every job named is resolved and the expression is stored with ids (``done(12) &&
ended(13[2])``), so what it means cannot change when another job takes the name later. As in LSF, a
name names the submitter's own jobs, and a name several of them carry names them all: each must
satisfy the condition (``ended(prep)`` -> ``ended(12) && ended(15)``), or only the one submitted last
where the site sets ``job_dep_last_sub`` (LSF's ``JOB_DEP_LAST_SUB=1``). ``prep*`` names every job
whose name begins ``prep``. ``done(12[*])`` (or ``done(sweep[*])``), given to an array of the same
indexes, makes each element wait for the element of the same index. A malformed expression, or a job that does not exist,
is refused with the column. Conditions are judged three ways: met, not yet, or never (the job ended
the other way): a dependency that can never be met is reported in the pend reason (``xce jobs -p``)
and ``xce kill --orphans`` removes such jobs.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from xce.controller.errors import Conflict, FieldErrors, NotFound
from xce.controller.jobs import refs
from xce.controller.store.schema import jobs
from xce.jobref import RefError, format_indexes, parse_ref

MET, WAIT, NEVER = "met", "wait", "never"
_QUOTE_HINT = ' (a job name with spaces or ( ) & | ! , is written in double quotes: done("my job"))'
KINDS = ("done", "exit", "ended", "started")
_OPS = ("==", "!=", ">=", "<=", ">", "<")
_FINISHED = ("DONE", "EXIT")


class DependError(ValueError):
    """A dependency that cannot be accepted; ``column`` is 1-based in the text as written."""

    def __init__(self, text: str, column: int, what: str) -> None:
        super().__init__(f"dependency {text!r} column {column}: {what}")
        self.column = column


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def error(self, what: str, at: int | None = None) -> DependError:
        return DependError(self.text, (self.pos if at is None else at) + 1, what)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def expect(self, s: str) -> None:
        if not self.peek(s):
            found = repr(self.text[self.pos]) if self.pos < len(self.text) else "the end"
            raise self.error(f"expected {s!r}, found {found}")
        self.pos += len(s)

    def parse(self) -> Any:
        self.skip()
        if self.pos >= len(self.text):
            raise self.error("expected a condition such as done(12), found nothing")
        node = self.expr()
        self.skip()
        if self.pos < len(self.text):
            raise self.error(f"expected '&&', '||' or the end, found {self.text[self.pos]!r}" + _QUOTE_HINT)
        return node

    def expr(self) -> Any:
        node = self.conj()
        while self.peek("||"):
            self.pos += 2
            node = ("or", node, self.conj())
        return node

    def conj(self) -> Any:
        node = self.unary()
        while self.peek("&&"):
            self.pos += 2
            node = ("and", node, self.unary())
        return node

    def unary(self) -> Any:
        if self.peek("!") and not self.peek("!="):
            self.pos += 1
            return ("not", self.unary())
        if self.peek("("):
            self.pos += 1
            node = self.expr()
            self.expect(")")
            return node
        return self.cond()

    def word(self) -> tuple[str, int]:
        """A job or a condition name: up to a delimiter, brackets kept; or a quoted name."""
        self.skip()
        start = self.pos
        if self.pos < len(self.text) and self.text[self.pos] == '"':
            end = self.text.find('"', self.pos + 1)
            if end < 0:
                raise self.error("a quoted name is not closed")
            self.pos = end + 1
            return self.text[start + 1:end], start
        depth = 0
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
            elif depth == 0 and (ch.isspace() or ch in "()&|!,"):
                break
            self.pos += 1
        if self.pos == start:
            found = repr(self.text[start]) if start < len(self.text) else "the end"
            raise self.error(f"expected a condition such as done(12) or a job, found {found}")
        return self.text[start:self.pos], start

    def cond(self) -> Any:
        word, at = self.word()
        if word == "singleton" and self.peek("("):
            self.pos += 1
            self.expect(")")
            return ("singleton", at)
        if word in KINDS and self.peek("("):
            self.pos += 1
            job, job_at = self.word()
            code = None
            if self.peek(","):
                if word != "exit":
                    raise self.error(f"{word}() takes one job; only exit() takes an exit code")
                self.pos += 1
                self.skip()
                op = next((o for o in _OPS if self.text.startswith(o, self.pos)), "==")
                if self.text.startswith(op, self.pos):
                    self.pos += len(op)
                self.skip()
                start = self.pos
                while self.pos < len(self.text) and self.text[self.pos].isdigit():
                    self.pos += 1
                if self.pos == start:
                    raise self.error("expected an exit code (a whole number)")
                code = (op, int(self.text[start:self.pos]))
            if not self.peek(")"):
                found = repr(self.text[self.pos]) if self.pos < len(self.text) else "the end"
                raise self.error(f"expected ')', found {found}" + _QUOTE_HINT)
            self.pos += 1
            return ("cond", word, job, job_at, code)
        if self.peek("("):
            raise self.error(f"unknown condition {word!r} (expected one of: {', '.join(KINDS)})", at)
        return ("cond", "done", word, at, None)


def parse(text: str) -> Any:
    return _Parser(text).parse()


def _show(node: Any) -> str:
    kind = node[0]
    if kind == "cond":
        _, word, job, _, code = node
        if code is None:
            return f"{word}({job})"
        return f"{word}({job}, {'' if code[0] == '==' else code[0]}{code[1]})"
    if kind == "not":
        inner = node[1]
        return f"!{_show(inner)}" if inner[0] in ("cond", "not") else f"!({_show(inner)})"
    left, right = node[1], node[2]
    wrap = (lambda n: f"({_show(n)})" if n[0] == "or" else _show(n)) if kind == "and" else _show
    return f"{wrap(left)} {'&&' if kind == 'and' else '||'} {wrap(right)}"


def resolve(ctl, p, text: str, array=None, name: str | None = None) -> str | None:
    """The expression with every job resolved to ids, as stored (None: nothing to wait for);
    DependError otherwise. ``array`` (xce.jobref.ArraySpec, for ``[*]``) and ``name`` (for
    ``singleton()``) are the submitted job's."""
    tree = parse(text)
    names = "last" if ctl.config.job_dep_last_sub else "all"

    def singleton(at: int) -> Any:
        """Slurm's ``singleton``: after every unfinished job of the user's of the same name (None: none)."""
        if name is None:
            raise DependError(text, at + 1, "singleton waits for your earlier jobs of the same name: give this "
                              "job a name (--job-name)")
        with ctl._begin():
            ids = sorted({r.array_id or r.id for r in ctl.conn.execute(
                sa.select(jobs.c.id, jobs.c.array_id).where(jobs.c.user == p.name, jobs.c.name == name,
                                                            jobs.c.state.not_in(_FINISHED)))})
        out = None
        for jobid in ids:
            cond = ("cond", "ended", str(jobid), at, None)
            out = cond if out is None else ("and", out, cond)
        return out

    def one(word: str, rows: list[dict[str, Any]], ref, each: bool, at: int, code) -> Any:
        first = rows[0]
        if each:
            if first["array_id"] is None:
                raise DependError(text, at + 1, f"job {first['id']} is not an array ([*] pairs each element of "
                                  f"this array with the same element of another)")
            theirs = tuple(sorted(r["array_index"] for r in rows))
            if array is None or tuple(array.indexes) != theirs:
                mine = "this job is not an array" if array is None else f"this array's are {format_indexes(array.indexes)}"
                raise DependError(text, at + 1, f"job {first['array_id']}[*] pairs arrays of the same indexes: its "
                                  f"are {format_indexes(theirs)}, {mine}")
            shown = f"{first['array_id']}[*]"
        elif first["array_id"] is None:
            shown = str(first["id"])
        elif ref.indexes is None and ref.id in (None, first["array_id"]):
            shown = str(first["array_id"])  # the whole array
        else:
            shown = f"{first['array_id']}[{format_indexes(sorted(r['array_index'] for r in rows))}]"
        return ("cond", word, shown, at, code)

    def walk(node: Any) -> Any:
        if node[0] == "cond":
            _, word, job, at, code = node
            each = job.endswith("[*]")
            job = job[:-3] if each else job
            try:
                ref = parse_ref(job)
                if each and ref.indexes is not None:
                    raise RefError(f"job {job}[*]: [*] follows a job id or name, not indexes")
                found = refs.groups(ctl, p, job, names=names)
            except RefError as exc:
                raise DependError(text, at + 1, str(exc)) from None
            except (NotFound, Conflict) as exc:
                raise DependError(text, at + 1, str(exc)) from None
            except FieldErrors as exc:
                raise DependError(text, at + 1, exc.errors[0]["msg"]) from None
            out = one(word, found[0], ref, each, at, code)
            for rows in found[1:]:  # a name several jobs carry: all of them must satisfy it (LSF)
                out = ("and", out, one(word, rows, ref, each, at, code))
            return out
        if node[0] == "singleton":
            return singleton(node[1])
        if node[0] == "not":
            inner = walk(node[1])
            if inner is None:
                raise DependError(text, 1, "!singleton() can never be met")
            return ("not", inner)
        left, right = walk(node[1]), walk(node[2])  # None: met already
        if left is None or right is None:
            return None if node[0] == "or" else left if right is None else right
        return (node[0], left, right)

    resolved = walk(tree)
    return None if resolved is None else _show(resolved)


def _rows(ctl, job: str) -> list[dict[str, Any]]:
    ref = parse_ref(job)
    c = ctl.conn
    cols = (jobs.c.id, jobs.c.state, jobs.c.exit_code, jobs.c.start_time, jobs.c.array_id, jobs.c.array_index)
    rows = [dict(r) for r in c.execute(sa.select(*cols).where(jobs.c.array_id == ref.id)).mappings()]
    if not rows:
        rows = [dict(r) for r in c.execute(sa.select(*cols).where(jobs.c.id == ref.id)).mappings()]
    if ref.indexes is not None:
        wanted = set(ref.indexes)
        rows = [r for r in rows if r["array_index"] in wanted]
    return rows


def _exit_matches(code: int | None, want: tuple[str, int] | None) -> bool:
    if want is None:
        return True
    if code is None:
        return False
    op, n = want
    return {"==": code == n, "!=": code != n, ">": code > n, ">=": code >= n, "<": code < n, "<=": code <= n}[op]


def _judge(ctl, node: Any, cache: dict[str, list[dict[str, Any]]], index: int | None) -> tuple[str, list[str]]:
    """(MET | WAIT | NEVER, the conditions that decide it) for one (sub)expression; ``index`` is the
    judged element's, which ``12[*]`` stands for."""
    kind = node[0]
    if kind == "cond":
        _, word, job, at, code = node
        if job.endswith("[*]"):  # without an element (a whole array being submitted): all of them
            job = job[:-3] if index is None else f"{job[:-3]}[{index}]"
            node = ("cond", word, job, at, code)
        rows = cache.get(job)
        if rows is None:
            rows = cache[job] = _rows(ctl, job)
        me = _show(node)
        if not rows:
            return NEVER, [f"{me}: job {job} no longer exists"]
        if word == "done":
            bad = [r for r in rows if r["state"] == "EXIT"]
            if bad:
                return NEVER, [f"{me}: job {job} ended EXIT"]
            return (MET, []) if all(r["state"] == "DONE" for r in rows) else (WAIT, [me])
        if word == "exit":
            if any(r["state"] == "DONE" or (r["state"] == "EXIT" and not _exit_matches(r["exit_code"], code))
                   for r in rows):
                return NEVER, [f"{me}: job {job} ended otherwise"]
            return (MET, []) if all(r["state"] == "EXIT" for r in rows) else (WAIT, [me])
        if word == "ended":
            return (MET, []) if all(r["state"] in _FINISHED for r in rows) else (WAIT, [me])
        # started: it ran (or runs); a job that ended without running never will
        if any(r["state"] in _FINISHED and not r["start_time"] for r in rows):
            return NEVER, [f"{me}: job {job} ended without starting"]
        return (MET, []) if all(r["state"] != "PEND" for r in rows) else (WAIT, [me])
    if kind == "not":
        state, why = _judge(ctl, node[1], cache, index)
        flipped = {MET: NEVER, NEVER: MET, WAIT: WAIT}[state]
        return flipped, [f"!{w}" for w in why] if flipped != MET else []
    a, why_a = _judge(ctl, node[1], cache, index)
    b, why_b = _judge(ctl, node[2], cache, index)
    if kind == "and":
        if NEVER in (a, b):
            return NEVER, (why_a if a == NEVER else []) + (why_b if b == NEVER else [])
        if a == b == MET:
            return MET, []
        return WAIT, (why_a if a == WAIT else []) + (why_b if b == WAIT else [])
    if MET in (a, b):
        return MET, []
    if a == b == NEVER:
        return NEVER, why_a + why_b
    return WAIT, (why_a if a == WAIT else []) + (why_b if b == WAIT else [])


def status(ctl, row: dict[str, Any]) -> tuple[str, str]:
    """(MET | WAIT | NEVER, the pend reason's text) for a job's stored dependency."""
    text = row["depend"]
    with ctl._begin():
        state, why = _judge(ctl, parse(text), {}, row.get("array_index"))
    if state == MET:
        return MET, ""
    if state == NEVER:
        return NEVER, (f"dependency can never be met: {'; '.join(why)} (`xce kill --orphans` removes such jobs)")
    return WAIT, f"waiting for {' and '.join(why)} ({text})"
