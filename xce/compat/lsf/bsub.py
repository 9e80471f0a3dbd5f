"""``bsub``: submit a job as LSF does, through the table and the reader ``#BSUB`` lines go through
(:mod:`xce.compat.lsf.options`), so a command line and a script mean the same.

A command (``bsub [options] WORDS...``) runs as ``/bin/sh -c "WORDS"``, and standard input is
then never read (clients pass an empty pipe); with no command the job script comes on standard
input, and a single argument that is a job script (``#!`` or ``#BSUB`` lines) is that script.
A bare ``-M N`` or ``rusage[mem=N]`` is in LSF_UNIT_FOR_LIMITS (:mod:`xce.compat.lsf._conf`).
Options that cannot matter here (service classes, ...) are accepted and kept with the job;
those whose effect this cluster cannot give are refused, and the job is not submitted.
"""

from __future__ import annotations

import os
import sys

from xce.compat.lsf import tables
from xce.compat.lsf._args import Failed, Usage, main_of

USAGE = """Usage: bsub [-h] [-V] [-H] [-x] [-r | -rn] [-B] [-N | -Ne] [-I | -Ip | -Is | -K]
            [-q "queue_name ..."] [-m "host_name ..."] [-n min_tasks[,max_tasks]] [-nnodes num_nodes]
            [-R "res_req" [-R "res_req" ...]] [-J job_name] [-Jd "job_description"] [-P project_name]
            [-M mem_limit] [-W [hour:]minute] [-We [hour:]minute] [-b [[year:][month:]day:]hour:minute]
            [-w "dependency_expression"] [-o out_file | -oo out_file] [-e err_file | -eo err_file]
            [-cwd "current_working_dir"] [-env "none" | "all, [~var_name[, ~var_name] ...]
            [var_name=var_value[, var_name=var_value] ...]"] [-sp priority] [-wa "signal"]
            [-wt [hour:]minute] [-gpu "num=num_gpus[:mode=shared|exclusive_process]..."] [-G user_group]
            [-g job_group_name] [-app application_profile_name] [-L login_shell] [-U reservation_id]
            [-u mail_user] [-sla service_class_name] [-ext "external_scheduler_options"]
            [command [argument ...] | job_script]"""

def _options(argv: list[str]) -> tuple[list, list[str], str | None]:
    """bsub's options as (option, value) pairs of its table, the command, and the interactive mode."""
    from xce.compat.lsf.options import BadOption, split

    try:
        pairs, command = split(argv)
    except BadOption as exc:
        raise Usage(str(exc)) from None
    interactive = None
    for option, _ in pairs:
        if option.name == "-K":
            interactive = interactive or "-K"
        elif option.name.startswith("-I"):
            interactive = option.name
    return pairs, command, interactive


def _command(words: list[str]) -> list[str]:
    """LSF runs a command line with the shell; a job script given by name is run (and read) as one."""
    from xce.cli.submit import _job_script

    if not words:
        return []
    if len(words) >= 1 and os.path.isfile(words[0]) and _job_script(words[0]) is not None:
        return words
    return ["/bin/sh", "-c", " ".join(words)]


def run(argv: list[str]) -> int:
    from xce.cli.submit import MAX_SCRIPT_BYTES
    from xce.compat.lsf._conf import unit_for_limits

    environ = dict(os.environ)  # the job's environment: the submitter's, as it was
    # The one unit for -M and rusage[mem=N]: the BSUB translation reads it from here.
    os.environ["LSF_UNIT_FOR_LIMITS"] = unit_for_limits()
    stdin = None if sys.stdin is None or sys.stdin.isatty() else \
        (lambda: sys.stdin.buffer.read(MAX_SCRIPT_BYTES + 1))
    body, interactive = build(argv, environ=environ, cwd=os.getcwd(), host=os.uname().nodename, stdin=stdin)
    return _submit(body, interactive)


def build(argv: list[str], *, environ: dict[str, str], cwd: str, host: str, stdin) -> tuple[dict, str | None]:
    """The job's ``POST /v1/jobs`` body for bsub's arguments, and its interactive mode (``-I``,
    ``-Is``, ``-Ip``, ``-K`` or None); Usage or Failed in bsub's words."""
    from xce.cli.jobscript import Refused
    from xce.cli.spec import UsageError
    from xce.cli.submit import SUBMIT, job_request
    from xce.compat.lsf.options import INTERACTIVE, job_words

    pairs, command, interactive = _options(argv)
    try:
        xce_words = job_words(pairs)
        if interactive and interactive != "-K":
            xce_words += INTERACTIVE[interactive]
        given = SUBMIT.parse([*xce_words, "--", *_command(command)])
        merged: dict = {}
        body = job_request(given, stdin=stdin, environ=environ, cwd=cwd, host=host, prog="bsub", merged=merged)
    except (Refused, UsageError, ValueError) as exc:
        raise Failed(f"{str(exc).rstrip('.')}. Job not submitted.") from None
    if body.get("interactive") and not interactive:  # -I, -Is, -Ip in the script's #BSUB lines
        interactive = "-Is" if merged.get("pty") else "-I"
    if not command and not body.get("script"):
        raise Failed("No command given. Job not submitted.")
    return body, interactive


def _submit(body: dict, interactive: str | None) -> int:
    from xce.compat.lsf._client import connect, request

    client = connect()
    if interactive and interactive != "-K":
        from xce.cli import interactive as terminal

        body = terminal.prepare(body)
    try:
        res = request(client, "POST", "/v1/jobs", body)
    except Failed as exc:
        raise Failed(f"{str(exc).rstrip('.')}. Job not submitted.") from None
    if interactive and interactive != "-K":
        return terminal.follow(client, res, raw=interactive != "-I")
    where = "queue" if body.get("queue") else "default queue"
    print(f"Job <{res['jobid']}> is submitted to {where} <{res['queue']}>.", flush=True)
    return _wait(client, res["jobid"]) if interactive == "-K" else 0


def _wait(client, jobid: int) -> int:
    """``-K``: until the job (every element of an array) has ended; its exit code, as LSF's bsub -K.
    Interrupted, the job is killed, as LSF kills it."""
    import time

    from xce.compat.lsf._client import request
    from xce.compat.lsf._states import exit_code

    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    say("<<Waiting for dispatch ...>>")
    started = False
    try:
        while True:
            jobs = request(client, "GET", "/v1/jobs", params={"job": [str(jobid)]})["jobs"]
            if not started and any(j.get("start_time") for j in jobs):
                started = True
                say(f"<<Starting on {next(j['placement'][0]['host'] for j in jobs if j.get('placement'))}>>")
            if jobs and all(j["state"] in ("DONE", "EXIT") for j in jobs):
                failed = [j for j in jobs if j["state"] == "EXIT"]
                say("<<Job is finished>>" if not failed else f"<<Job <{jobid}> exited>>")
                return int(exit_code(failed[0]) or 1) if failed else 0
            time.sleep(0.5)
    except KeyboardInterrupt:
        request(client, "POST", "/v1/jobs/act", {"action": "kill", "jobs": [str(jobid)]})
        say(f"<<Job <{jobid}> is killed>>")
        return 130


main = tables.with_help(main_of("bsub", USAGE, run), "bsub", USAGE)
