"""bkill, bstop, bresume and brequeue: one ``POST /v1/jobs/act`` for all the jobs named, one line
per job in LSF's words (``Job <N> is being terminated``; ``Job <N>: Job has already finished``;
``Job <N>: No matching job found``), exit 255 when any job could not be acted on."""

from __future__ import annotations

import sys

from xce.compat.lsf import _jobs
from xce.compat.lsf._args import EXIT_FAIL, Failed, Usage, last, parse
from xce.compat.lsf._client import connect, refusal

DOING = {"kill": "being terminated", "signal": "being signaled", "suspend": "being stopped",
         "resume": "being resumed", "requeue": "being requeued", "hold": "being stopped",
         "release": "being resumed"}


def usage_text(prog: str, extra: str = "") -> str:
    return (f"Usage: {prog} [-h] [-V] {extra}[-J job_name] [-q queue_name] [-u user_name | -u all]\n"
            f"{' ' * (7 + len(prog))}[jobId | \"jobId[index_list]\" ...]")


def act(client, action: str, jobs: list[str], everything: bool, opts: dict, signal: str | None = None) -> list[dict]:
    body: dict = {"action": action, "jobs": jobs, "all": everything}
    for key, flag in (("queue", "q"), ("name", "J")):
        if last(opts, flag) is not None:
            body[key] = last(opts, flag)
    if last(opts, "u") is not None:
        body["user"] = last(opts, "u")
    if signal is not None:
        body["signal"] = signal
    answer, refused = refusal(client, "POST", "/v1/jobs/act", body)
    if refused:
        raise Failed("\n".join(refused[1]))
    return answer["results"]


def failure(result: dict) -> str:
    """LSF's line for a job that could not be acted on."""
    job, message = result.get("job") or "", result.get("message") or ""
    if result.get("status") == 404 or result.get("jobid") is None:
        return f"Job <{job}>: No matching job found"
    if " DONE" in message or " EXIT" in message or "finished" in message:
        return f"Job <{job}>: Job has already finished"
    if "already held" in message:
        return f"Job <{job}>: Job has already been suspended"
    if result.get("status") == 403:
        return f"Job <{job}>: User permission denied"
    return f"Job <{job}>: {message.split(': ', 1)[-1]}"


def in_order(results: list[dict], asked: list[str]) -> list[dict]:
    """The results in the order the jobs were named (LSF answers for each as it comes to it)."""
    def rank(r: dict) -> int:
        job = r.get("job") or ""
        return next((i for i, text in enumerate(asked) if job == text or job.startswith(text + "[")), len(asked))

    return sorted(results, key=rank)


def report(results: list[dict], doing: str, asked: list[str] | None = None) -> int:
    bad = False
    for r in in_order(results, asked or []):
        if r["ok"]:
            print(f"Job <{r['job']}> is {doing}")
        else:
            bad = True
            print(failure(r), file=sys.stderr)
    return EXIT_FAIL if bad else 0


def program(action: str, argv: list[str], flags: frozenset[str], valued: frozenset[str],
            *, fallback: str | None = None) -> int:
    """The common shape of bstop, bresume and brequeue: ``action`` on the jobs named; ``fallback``
    for the pending ones it cannot apply to (bstop holds a pending job, as LSF makes it PSUSP;
    bresume releases it)."""
    opts, words = parse(argv, flags, valued | {"J", "q", "u"})
    everything = "0" in words
    ids = _jobs.check_ids([w for w in words if w != "0"])
    if not (ids or everything or opts.get("J") or opts.get("q") or opts.get("u")):
        raise Usage("")
    client = connect()
    results = act(client, action, ids, everything, opts)
    if fallback:
        pending = [r for r in results if not r["ok"] and r.get("jobid") and " PEND" in (r.get("message") or "")]
        if pending:
            again = {r["jobid"]: r for r in act(client, fallback, [r["job"] for r in pending], False, {})}
            results = [again.get(r["jobid"], r) if r in pending else r for r in results]
    if not results:
        print("No matching job found" if ids else "No unfinished job found", file=sys.stderr)
        return EXIT_FAIL
    return report(results, DOING[action], ids)
