"""``bpeek [-f] [-q queue | -m host | -J name | job_id | "job_id[index]"]``: the output a running
job has written so far, as LSF shows it (``<< output from stdout >>``, then the file); ``-f``
follows it as ``tail -f`` does and stops when the job ends. Without a job, the caller's most
recently submitted running job (narrowed by ``-q``, ``-m``, ``-J``).

Where the output is read, and who may read it: the controller knows the job's output path, and
the file is read here, by this process, with the rights of whoever runs ``bpeek``. So it works
where the job's working directory is on a file system this machine shares with the job's host
(the usual site: home directories and scratch on NFS or Lustre), and says plainly, naming the host
and path, when the file is not visible here. Nothing runs with anyone else's rights: only the
job's owner or an administrator may peek (the controller says who the caller is), and the file
must belong to the job's owner and be no symbolic link, so a job cannot point an administrator's
``bpeek`` at a file that is not its output.
"""

from __future__ import annotations

import os
import sys
import time

from xce.compat.lsf import _jobs
from xce.compat.lsf._args import Failed, last, main_of, parse

USAGE = 'Usage: bpeek [-h] [-V] [-f] [-q queue_name | -m host_name | -J job_name | job_id | "job_id[index_list]"]'
RUNNING = ("RUN", "USUSP", "SSUSP")
#: How often ``-f`` looks for more output (and whether the job has ended).
FOLLOW_S = 1.0


def output_path(job: dict) -> str:
    """The job's standard output as its worker opened it: the codes only a dispatch knows (``%N``)
    filled in, relative to the job's working directory; ``xce-ID.out`` there when none was named."""
    from xce import jobfiles

    cwd = job.get("cwd") or "/"
    pattern = job.get("stdout")
    if not pattern:
        return os.path.join(cwd, f"xce-{job['jobid']}.out")
    hosts = [p["host"] for p in job.get("placement") or []]
    known = jobfiles.values(jobid=job["jobid"], array_id=job.get("array_id"), index=job.get("array_index"),
                            name=job.get("name"), command=job.get("command"), user=job["user"],
                            host=hosts[0] if hosts else None)
    return os.path.normpath(os.path.join(cwd, jobfiles.expand(pattern, known)))


def open_output(job: dict, path: str):
    """The file, opened without following a link, after checking it is the owner's; Failed says why not."""
    import pwd

    head = (job.get("placement") or [{}])[0].get("host", "its host")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise Failed(f"Job <{_jobs.job_id(job)}>: its output file {path} is not visible on this machine: it is "
                     f"on {head}, or in a directory this machine does not share with it (run bpeek on {head})") from None
    except PermissionError:
        raise Failed(f"Job <{_jobs.job_id(job)}>: {path}: Permission denied") from None
    except OSError as exc:  # ELOOP: a symbolic link
        raise Failed(f"Job <{_jobs.job_id(job)}>: {path}: not the job's output file ({exc.strerror})") from None
    try:
        owner = pwd.getpwnam(job["user"]).pw_uid
    except KeyError:
        owner = None
    if os.fstat(fd).st_uid != owner:
        os.close(fd)
        raise Failed(f"Job <{_jobs.job_id(job)}>: {path} does not belong to the job's owner {job['user']}: "
                     f"not showing it")
    return os.fdopen(fd, "rb")


def _pick(client, opts: dict, words: list[str], me: dict) -> dict:
    from xce.compat.lsf._client import request

    if len(words) > 1:
        raise Failed(USAGE)
    if words:
        found = request(client, "GET", "/v1/jobs", params={"job": words[0], "all": "true", "limit": 2})["jobs"]
        if not found:
            raise Failed(f"Job <{words[0]}> is not found")
        return found[0]
    params = {"user": me["name"], "limit": 100_000}
    if last(opts, "q"):
        params["queue"] = last(opts, "q")
    found = [j for j in request(client, "GET", "/v1/jobs", params=params)["jobs"] if j["state"] in RUNNING
             and (not last(opts, "J") or j.get("name") == last(opts, "J"))
             and (not last(opts, "m") or last(opts, "m") in _jobs.hosts(j)
                  or any(p["host"] == last(opts, "m") for p in j.get("placement") or []))]
    if not found:
        raise Failed("No unfinished job found")
    return max(found, key=lambda j: (j.get("submit_time") or 0, j["jobid"]))


def run(argv: list[str]) -> int:
    opts, words = parse(argv, frozenset({"f"}), frozenset({"q", "m", "J"}))
    from xce.compat.lsf._client import connect, request

    client = connect()
    me = request(client, "GET", "/v1/whoami")
    summary = _pick(client, opts, words, me)
    if summary["user"] != me["name"] and me.get("role") != "admin":
        raise Failed(f"Job <{_jobs.job_id(summary)}>: User permission denied")
    job = request(client, "GET", f"/v1/jobs/{summary['jobid']}")
    if job["state"] == "PEND" or job["state"].startswith("P"):
        raise Failed(f"Job <{_jobs.job_id(job)}>: Not yet started.")
    if job["state"] not in RUNNING:
        raise Failed(f"Job <{_jobs.job_id(job)}>: Job has already finished.")
    with open_output(job, output_path(job)) as f:
        out = sys.stdout.buffer
        out.write(b"<< output from stdout >>\n")
        out.write(f.read())
        out.flush()
        while opts.get("f"):
            state = request(client, "GET", "/v1/jobs", params={"id": job["jobid"], "all": "true"})["jobs"]
            more = f.read()
            if more:
                out.write(more)
                out.flush()
            if not state or state[0]["state"] not in RUNNING:
                break
            time.sleep(FOLLOW_S)
    return 0


main = main_of("bpeek", USAGE, run)
