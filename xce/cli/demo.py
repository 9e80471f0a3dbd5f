"""``xce demo``: a shipped scenario run through the real scheduling core, printing every decision.

It needs no running cluster: three queues, four hosts, serial jobs, a parallel job spread over
two hosts, a job that waits with a named shortfall, and a high-priority job that preempts a
low-priority one, which is resumed when the urgent job finishes.
"""

from __future__ import annotations

import typer

G = 1024**3


def run_demo(console=None) -> list:
    from rich.console import Console
    from rich.table import Table

    from xce.core.decisions import Dispatch, Pend, Preempt, Resume
    from xce.testing import Harness, make_host, make_job, queue

    console = console or Console()
    h = Harness(queues=[queue("urgent", 50, preemptible_queues=["batch"]), queue("normal", 30),
                        queue("batch", 10)], validate=True)
    h.hosts(make_host("node01").slots(4).mem("16G"), make_host("node02").slots(4).mem("16G"),
            make_host("node03").slots(2).mem("8G"))
    table = Table(title="XCE demo: every decision of the scheduling core")
    for col in ("round", "decision", "job", "detail"):
        table.add_column(col)
    rows: list = []

    def show(round_no: int, decisions) -> None:
        for d in decisions:
            if isinstance(d, Dispatch):
                detail = " + ".join(f"{host}:{n}" for host, n in d.placement)
                row = (str(round_no), "DISPATCH", str(d.jobid), detail)
            elif isinstance(d, Pend):
                row = (str(round_no), "PEND", str(d.jobid), "; ".join(r.text for r in d.reasons))
            elif isinstance(d, Preempt):
                row = (str(round_no), "PREEMPT", str(d.preempting_jobid),
                       f"suspend {', '.join(map(str, d.victim_jobids))} with {d.signal}")
            else:
                assert isinstance(d, Resume)
                row = (str(round_no), "RESUME", str(d.jobid), "slots free again")
            rows.append(row)
            table.add_row(*row)

    h.submit(make_job(1).queue("normal").rusage("mem=2G"), make_job(2).queue("normal"),
             make_job(3).queue("normal").tasks(4).span("ptile=2"),
             make_job(4).queue("batch").tasks(2).rusage("mem=4G"), make_job(5).queue("normal").rusage("mem=32G"),
             make_job(7).queue("batch").tasks(2))
    show(1, h.round_decisions())
    h.submit(make_job(6).queue("urgent").tasks(2).span("hosts=1"))
    show(2, h.round_decisions())
    for d in list(h.recorder.decisions):
        if isinstance(d, Preempt):
            for victim in d.victim_jobids:
                h.state(victim, "SSUSP", "preempted")
    show(3, h.round_decisions())
    h.state(6, "DONE")
    show(4, h.round_decisions())
    console.print(table)
    return rows


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo() -> None:
        """Run a shipped scenario through the scheduling core and print its decisions.

        Example: ``xce demo``
        """
        run_demo()
