"""The live demo behind ``xce demo`` and ``make demo``: a real cluster, a small mixed workload, gone after.

A new user's first command should show the scheduler doing its job on real processes, not only
print what the core would decide. So this starts a :class:`~xce.cluster.local.LocalCluster` (the
same processes ``xce up`` starts), submits through the same HTTP client the CLI uses, and watches
the jobs the way a user would (``GET /v1/jobs``). Everything it proves is taken from the
controller's own records (each job's state history), not from timing guesses.

The workload is staged rather than submitted at once so that the preemption cannot be dodged: the
high-priority job is submitted only when every slot is taken, and the only job it may suspend is the
low-priority one. Three workers of two slots each keep it small enough to finish in seconds.

The cluster is stopped in every case (success, failure, Ctrl-C, SIGTERM turned into an exception by
the caller), and ``<state-dir>/demo.json`` records the pids of the cluster and of the jobs, so a test
or a suspicious user can check afterwards that nothing was left running.
"""

from __future__ import annotations

import json
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from xce.cluster.local import ClusterError, LocalCluster
from xce.procs import pid_alive
from xce.worker.jobstate import read_journal

RESULT_FILE = "demo.json"
WORKERS, SLOTS = 3, 2
FINISHED = ("DONE", "EXIT")


def default_config() -> Path:
    """``examples/demo.toml`` of the source tree: one file serves as the demo's config and as an example."""
    path = Path(__file__).resolve().parents[2] / "examples" / "demo.toml"
    if not path.is_file():
        raise ClusterError(f"the demo configuration {path} is missing (it ships in the source tree, "
                           f"not in the wheel); pass --config with a file that defines queues normal, low and high")
    return path


@dataclass
class DemoJob:
    label: str
    queue: str
    tasks: int
    command: list[str]
    request: str = ""
    jobid: int | None = None


def workload() -> dict[str, list[DemoJob]]:
    """The stages, in order; each stage's jobs are submitted together."""
    serial = [DemoJob("serial", "normal", 1, ["sh", "-c", "echo hello from $XCE_JOBID on $XCE_EXEC_HOST; sleep 1"])
              for i in (1, 2, 3)]
    parallel = DemoJob("parallel, 2 hosts", "normal", 4,
                       ["sh", "-c", 'echo "job $XCE_JOBID: $XCE_TASKS tasks on $XCE_HOSTS"; sleep 4'], "span[ptile=2]")
    # Steps of one second rather than one long sleep: a stopped sleep keeps counting wall time, so
    # only a loop shows in its output (a gap between two steps) that it really stood still.
    low = DemoJob("low priority, long", "low", 2,
                  ["sh", "-c", 'for i in 1 2 3 4 5; do echo "step $i at $(date +%T)"; sleep 1; done'],
                  "span[hosts=1]")
    high = DemoJob("high priority", "high", 2,
                   ["sh", "-c", 'echo "urgent job $XCE_JOBID on $XCE_HOSTS at $(date +%T)"; sleep 2'], "span[hosts=1]")
    return {"serial jobs": serial, "a parallel job and a low-priority job fill the cluster": [parallel, low],
            "a high-priority job needs a host: the low-priority job is suspended": [high]}


@dataclass
class DemoResult:
    ok: bool
    reason: str
    state_dir: Path
    output_dir: Path
    jobs: list[dict[str, Any]] = field(default_factory=list)
    preemptions: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    cluster_pids: dict[str, int] = field(default_factory=dict)
    job_pids: dict[int, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "reason": self.reason, "state_dir": str(self.state_dir),
                "output_dir": str(self.output_dir), "preemptions": self.preemptions, "events": self.events,
                "cluster_pids": self.cluster_pids, "job_pids": {str(k): v for k, v in self.job_pids.items()},
                "timings": self.timings,
                "jobs": [{k: j.get(k) for k in ("jobid", "queue", "tasks", "state", "placement", "exit_code",
                                                 "reason", "history")} for j in self.jobs]}


class DemoFailed(Exception):
    """The workload did not go as designed; the message says which job and how."""


class Demo:
    def __init__(self, state_dir: str | Path | None = None, *, config: str | Path | None = None, console=None,
                 timeout: float = 45.0, poll: float = 0.25, live: bool | None = None) -> None:
        from rich.console import Console

        self.state_dir = Path(state_dir).expanduser().absolute() if state_dir else \
            Path(tempfile.mkdtemp(prefix="xce-demo-"))
        self.output_dir = self.state_dir / "output"
        self.config = Path(config) if config else default_config()
        self.console = console or Console()
        self.timeout = timeout
        self.poll = poll
        self.live = self.console.is_terminal if live is None else live
        self.jobs: dict[int, DemoJob] = {}
        self.seen: dict[int, dict[str, Any]] = {}
        self.latest: dict[int, str] = {}
        self.events: list[str] = []
        self.job_pids: dict[int, int] = {}
        self._t0 = time.monotonic()

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> DemoResult:
        self.output_dir.mkdir(parents=True, exist_ok=True)
        cluster = LocalCluster(self.state_dir, WORKERS, SLOTS, config=self.config, round_interval=0.1,
                               report_interval=0.5)
        result = DemoResult(False, "interrupted", self.state_dir, self.output_dir)
        timings: dict[str, float] = {}
        try:
            self.console.print(f"[bold]XCE demo[/]: starting a controller, a scheduler and {WORKERS} workers "
                               f"of {SLOTS} slots on 127.0.0.1 (state in {self.state_dir})")
            t = time.monotonic()
            cluster.start()
            timings["start"] = time.monotonic() - t
            self.console.print(f"cluster up in {timings['start']:.1f}s: controller {cluster.url}, "
                               f"hosts {', '.join(cluster.worker_names)}; queues high (50, preempts low), "
                               f"normal (30), low (10)")
            result.cluster_pids = {k: p.pid for k, p in cluster.procs.items()}
            t = time.monotonic()
            try:
                self._run_workload(cluster)
                result.ok, result.reason = True, "every job ended DONE and the preemption was observed"
            except DemoFailed as exc:
                result.reason = str(exc)
            timings["workload"] = time.monotonic() - t
            try:
                result.jobs, result.preemptions = self._final(result)
            except Exception as exc:  # the table is a report: failing to make it must not skip the stop
                result.ok, result.reason = False, f"could not read the jobs' final state: {exc!r}"
        except ClusterError as exc:
            result.reason = f"the cluster did not start: {exc}"
        finally:
            result.cluster_pids = result.cluster_pids or {k: p.pid for k, p in cluster.procs.items()}
            t = time.monotonic()
            with _ignoring_sigint():
                cluster.stop()
            timings["stop"] = time.monotonic() - t
            result.timings = timings
            result.events = self.events
            result.job_pids = dict(self.job_pids)
            (self.state_dir / RESULT_FILE).write_text(json.dumps(result.to_json(), indent=2) + "\n")
        left = [pid for pid in [*result.cluster_pids.values(), *result.job_pids.values()] if pid_alive(pid)]
        if left and result.ok:
            result.ok, result.reason = False, f"processes still running after the stop: {left}"
        return result

    def _run_workload(self, cluster: LocalCluster) -> None:
        from xce.cli.client import ApiError, Client, Unreachable, describe
        from xce.client import statedir

        # The cluster's own URL and the user token it wrote, never $XCE_URL/$XCE_TOKEN: the demo must
        # not submit to whatever cluster the user's shell happens to point at.
        self.client = Client(cluster.url, statedir.read_token(self.state_dir))
        stages = list(workload().items())
        try:
            with self._display():
                for n, (title, jobs) in enumerate(stages, 1):
                    self._emit(f"[bold]stage {n}[/]: {title}")
                    for job in jobs:
                        self._submit(job)
                    ids = [j.jobid for j in jobs]
                    if n == 1:
                        self._watch(lambda s, ids=ids: all(s[i]["state"] in FINISHED for i in ids), f"stage {n}")
                    elif n == 2:
                        self._watch(lambda s, ids=ids: all(s[i]["state"] == "RUN" for i in ids), f"stage {n}")
                    else:
                        self._watch(lambda s: all(s[i]["state"] in FINISHED for i in self.jobs), "the last jobs")
        except ApiError as exc:
            raise DemoFailed(f"the controller refused a request: {'; '.join(describe(exc))}") from None
        except Unreachable as exc:
            raise DemoFailed(str(exc)) from None

    def _submit(self, job: DemoJob) -> None:
        body: dict[str, Any] = {"command": job.command, "queue": job.queue, "tasks": job.tasks,
                                "cwd": str(self.output_dir)}
        if job.request:
            body["request"] = job.request
        res = self.client.post("/v1/jobs", body)
        job.jobid = int(res["jobid"])
        self.jobs[job.jobid] = job
        self.latest[job.jobid] = "submitted"
        self._emit(f"job {job.jobid} submitted to queue {job.queue}: {job.label}")

    def _watch(self, done: Callable[[dict[int, dict[str, Any]]], bool], what: str) -> None:
        deadline = self._t0 + self.timeout
        while True:
            states = self._refresh()
            failed = [j for j in states.values() if j["state"] == "EXIT"]
            if failed:
                j = failed[0]
                raise DemoFailed(f"job {j['jobid']} ({self.jobs[j['jobid']].label}) ended EXIT: {j.get('reason')}")
            if done(states):
                return
            if time.monotonic() > deadline:
                waiting = ", ".join(f"job {i} {s['state']} ({s.get('reason')})" for i, s in states.items()
                                    if s["state"] not in FINISHED)
                raise DemoFailed(f"timed out after {self.timeout:g}s waiting for {what}: {waiting}")
            time.sleep(self.poll)

    def _refresh(self) -> dict[int, dict[str, Any]]:
        ans = self.client.get("/v1/jobs", id=list(self.jobs), all="true", user="all")
        states = {int(j["jobid"]): j for j in ans["jobs"]}
        for jid, job in states.items():
            before = self.seen.get(jid)
            if before is None or before["state"] != job["state"]:
                self._event(jid, before["state"] if before else None, job)
        self.seen.update(states)
        self._scan_job_pids()
        self._update_display()
        return states

    def _event(self, jid: int, old: str | None, job: dict[str, Any]) -> None:
        new, reason = job["state"], job.get("reason") or ""
        if new == "PEND":
            return
        if new == "RUN" and old == "SSUSP":
            text = f"job {jid} resumed ({reason})"
        elif new == "RUN":
            text = f"job {jid} started on {hosts(job)}"
        elif new == "SSUSP":
            text = f"job {jid} suspended by preemption ({reason})"
        elif new == "DONE":
            text = f"job {jid} done, exit code {job.get('exit_code')}"
        else:
            text = f"job {jid} {new}: {reason}"
        self.latest[jid] = text
        self._emit(text)

    def _scan_job_pids(self) -> None:
        """The jobs' own pids, from the workers' job records, while they exist (they go when a job ends)."""
        for d in self.state_dir.glob("workers/*/jobs"):
            for rec in read_journal(d).values():
                if rec.jobid in self.jobs and rec.pid:  # 0: its start is under way
                    self.job_pids[rec.jobid] = rec.pid

    # -- display ---------------------------------------------------------------------------
    def _stamp(self) -> str:
        return f"{time.monotonic() - self._t0:5.1f}s"

    def _emit(self, text: str) -> None:
        self.events.append(text)
        self.console.print(f"[dim]{self._stamp()}[/] {text}", highlight=False)

    def _display(self):
        """A Live table on a terminal; plain event lines elsewhere (CI logs, pipes, tests)."""
        import contextlib

        if not self.live:
            return contextlib.nullcontext()
        from rich.live import Live

        self._live = Live(self._table(), console=self.console, refresh_per_second=2, transient=True)
        return self._live

    def _update_display(self) -> None:
        live = getattr(self, "_live", None)
        if live is not None and self.live:
            live.update(self._table())

    def _table(self):
        from rich.table import Table

        table = Table(title="XCE demo: live", caption=self.events[-1] if self.events else None, title_justify="left")
        for col in ("job", "queue", "state", "hosts", "latest event"):
            table.add_column(col)
        for jid, job in self.jobs.items():
            s = self.seen.get(jid, {})
            table.add_row(str(jid), job.queue, _styled(s.get("state", "PEND")), hosts(s) or "-",
                          self.latest.get(jid, ""))
        return table

    # -- the end ---------------------------------------------------------------------------
    def _final(self, result: DemoResult) -> tuple[list[dict[str, Any]], list[str]]:
        """Details (with histories) of every job, the final table, the checks, and where the outputs are."""
        from rich.table import Table

        if not self.jobs:
            return [], []
        details = [self.client.get(f"/v1/jobs/{jid}") for jid in self.jobs]
        preemptions: list[str] = []
        table = Table(title="XCE demo: final state", title_justify="left")
        for col in ("job", "what", "queue", "state", "hosts", "exit", "history (seconds after submission)"):
            table.add_column(col, overflow="fold")
        for d in details:
            jid = int(d["jobid"])
            hist = d.get("history") or []
            t0 = hist[0]["ts"] if hist else 0
            steps = []
            for h in hist:
                at = (h["ts"] - t0) / 1e9
                if h["to"] == "PEND" and h["from"] is None:
                    continue
                label = f"{h['to'] if h['to'] != h['from'] else 'modified'} {at:.1f}"
                if h["to"] == "SSUSP" or (h["from"] == "SSUSP" and h["to"] == "RUN"):
                    label += f" ({h['reason']})"
                    what = "suspended" if h["to"] == "SSUSP" else "resumed"
                    preemptions.append(f"job {jid} {what} {at:.1f}s after submission: {h['reason']}")
                steps.append(label)
            table.add_row(str(jid), self.jobs[jid].label, d["queue"], _styled(d["state"]), hosts(d),
                          "" if d.get("exit_code") is None else str(d["exit_code"]), ", ".join(steps))
        self.console.print(table)
        for line in preemptions:
            self.console.print(f"Preemption seen in the history: {line}", highlight=False)
        if result.ok:
            problem = check(details, self.jobs)
            if problem:
                result.ok, result.reason = False, problem
        self.console.print(f"Job output: {self.output_dir}/xce-<job>.out (and .err); cluster logs: "
                           f"{self.state_dir / 'logs'}")
        for jid in self.jobs:
            out = self.output_dir / f"xce-{jid}.out"
            try:
                lines = out.read_text().splitlines()
            except OSError:
                continue
            if lines:
                self.console.print(f"  {out.name}: {' | '.join(lines)}", highlight=False, markup=False)
        return details, preemptions


def check(details: list[dict[str, Any]], jobs: dict[int, DemoJob]) -> str | None:
    """What the workload was designed to show but did not happen, or None."""
    for d in details:
        if d["state"] != "DONE":
            return f"job {d['jobid']} ({jobs[int(d['jobid'])].label}) ended {d['state']}: {d.get('reason')}"
    by_queue = {jobs[int(d["jobid"])].queue: d for d in details if jobs[int(d["jobid"])].queue in ("low", "high")}
    low, high = by_queue.get("low"), by_queue.get("high")
    if low is None or high is None:
        return "the low- and high-priority jobs were not both submitted"
    hist = low.get("history") or []
    suspended = [i for i, h in enumerate(hist) if h["to"] == "SSUSP"]
    if not suspended or f"preempted by job {high['jobid']}" not in hist[suspended[0]]["reason"]:
        return f"job {low['jobid']} was never preempted by job {high['jobid']} (its history: " \
               f"{[h['to'] + ' ' + h['reason'] for h in hist]})"
    if not any(h["from"] == "SSUSP" and h["to"] == "RUN" for h in hist[suspended[0]:]):
        return f"job {low['jobid']} was suspended but never resumed"
    parallel = [d for d in details if jobs[int(d["jobid"])].tasks == 4]
    if parallel and len(parallel[0].get("placement") or []) != 2:
        return f"the parallel job {parallel[0]['jobid']} ran on {hosts(parallel[0])}, not on two hosts"
    return None


def hosts(job: dict[str, Any]) -> str:
    return " + ".join(f"{p['host']}:{p['tasks']}" for p in job.get("placement") or [])


def _styled(state: str) -> str:
    colour = {"RUN": "green", "DONE": "bold green", "SSUSP": "yellow", "USUSP": "yellow", "EXIT": "red"}.get(state)
    return f"[{colour}]{state}[/]" if colour else state


class _ignoring_sigint:
    """A second Ctrl-C while the cluster stops would leave processes behind: let the stop finish."""

    def __enter__(self) -> None:
        self.old = None
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc: Any) -> None:
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
