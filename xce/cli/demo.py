"""``xce demo``: the first command a new user runs (``make demo``), so it shows XCE doing real work.

By default it starts a whole cluster on 127.0.0.1, runs a small mixed workload on it, shows its
progress, prints the final table and stops the cluster again (:mod:`xce.cluster.demo`). Its exit
status says whether everything the workload was designed to show really happened, so CI and a
doubtful user can rely on it.

``xce demo --core`` keeps the older scenario that runs through the pure scheduling core only: it
starts no process, which is useful where processes or sockets are not allowed, and it prints every
decision the core makes, including a job that waits with its shortfall named.
"""

from __future__ import annotations

from xce.cli.spec import Command, Opt, path

G = 1024**3


def run_demo(console=None) -> list:
    from rich.console import Console
    from rich.table import Table

    from xce.core.decisions import Dispatch, Pend, Preempt, Resume
    from xce.testing import Harness, make_host, make_job, queue

    console = console or Console()
    h = Harness(queues=[queue("urgent", 50, preemptible_queues=["batch"], preempt_policy="queue_priority_first"), queue("normal", 30),
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


def run_live(state_dir: str | None, config) -> int:
    """The live demo; returns the exit status (0 only if every job ended DONE and the preemption was seen)."""
    import os
    import signal

    from rich.console import Console

    from xce.cluster.demo import Demo

    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=120)  # logs and pipes: rich would wrap the final table at 80 columns

    def on_term(signum, frame):  # so that `timeout`, CI cancellation or `kill` still stop the cluster
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    demo = Demo(state_dir, config=config, console=console)
    try:
        result = demo.run()
    except KeyboardInterrupt:
        console.print(f"xce demo: interrupted; the cluster was stopped (state and logs in {demo.state_dir})")
        return 130
    finally:
        signal.signal(signal.SIGTERM, old)
    t = result.timings
    console.print(f"Timings: cluster start {t.get('start', 0):.1f}s, workload {t.get('workload', 0):.1f}s, "
                  f"stop {t.get('stop', 0):.1f}s. The cluster is stopped; state and logs stay in {result.state_dir}.")
    if result.ok:
        console.print(f"[bold green]xce demo: OK[/]: {result.reason}")
        return 0
    console.print(f"[bold red]xce demo: FAILED[/]: {result.reason}", highlight=False)
    return 1


def demo(core: bool, state_dir: str | None, config) -> int:
    if core:
        run_demo()
        return 0
    return run_live(state_dir, config)


COMMAND_SPECS = [Command(
    "demo", "Start a local cluster, run a small mixed workload on it with a preemption, and stop it.",
    [
        Opt("core", ("--core",), bool, False,
            help="Run the scenario through the scheduling core only (no processes) and print every decision."),
        Opt("state_dir", ("--state-dir",), complete="dir",
            help="State directory of the demo cluster [default: a new temporary one, kept afterwards]."),
        Opt("config", ("--config",), path, metavar="FILE",
            help="Cluster configuration; must define queues normal, low and high [default: examples/demo.toml]."),
    ],
    demo,
    examples=("xce demo", "xce demo --state-dir /tmp/demo", "xce demo --core"),
)]
