"""``bsub``: submit a job as LSF does, through the same translation ``xce submit`` uses for
``#BSUB`` lines (:data:`xce.cli.jobscript.BSUB`), so a command line and a script mean the same.

A command (``bsub [options] WORDS...``) runs as ``/bin/sh -c "WORDS"``, and standard input is
then never read (clients pass an empty pipe); with no command the job script comes on standard
input, and a single argument that is a job script (``#!`` or ``#BSUB`` lines) is that script.
A bare ``-M N`` or ``rusage[mem=N]`` is in LSF_UNIT_FOR_LIMITS (:mod:`xce.compat.lsf._conf`).
Options that cannot matter here (mail, service classes, ...) are accepted and kept with the job;
those whose effect this cluster cannot give are refused, and the job is not submitted.
"""

from __future__ import annotations

import os
import sys

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

#: Options kept with the job that change nothing here: name -> (takes a value, the name it is kept under).
KEPT = {"-Jd": (True, "job_description"), "-sla": (True, "service_class"), "-ext": (True, "external_scheduler"),
        "-extsched": (True, "external_scheduler"), "-a": (True, "esub"), "-alloc_flags": (True, "alloc_flags"),
        "-ptl": (True, "pending_time_limit"), "-eptl": (True, "eligible_pending_time_limit"),
        "-Lp": (True, "license_project"), "-jobaff": (True, "job_affinity"), "-hl": (False, "host_limits"),
        "-ul": (False, "user_limits"), "-tty": (False, "tty"), "-rnc": (True, "resize_notification")}
#: Options whose effect cannot be had here: name -> (takes a value, why).
REFUSED = {"-i": (True, "an input file for the job"), "-is": (True, "an input file for the job"),
           "-f": (True, "file transfer"), "-k": (True, "checkpointing"), "-E": (True, "pre-execution commands"),
           "-Ep": (True, "post-execution commands"), "-XF": (False, "X11 forwarding"),
           "-c": (True, "a CPU time limit"), "-C": (True, "a core file limit"), "-D": (True, "a data segment limit"),
           "-F": (True, "a file size limit"), "-S": (True, "a stack limit"), "-v": (True, "a swap limit"),
           "-T": (True, "a thread limit"), "-p": (True, "a process limit"), "-data": (True, "data staging"),
           "-stage": (True, "data staging"), "-pack": (True, "job packs"), "-jsdl": (True, "JSDL files"),
           "-jsdl_strict": (True, "JSDL files"), "-hostfile": (True, "host files"), "-network": (True, "networks"),
           "-csm": (True, "CSM allocations"), "-ti": (False, "immediate orphan termination"),
           "-Zs": (False, "spooling the command file"), "-s": (True, "a termination signal"),
           "-outdir": (True, "output directories"), "-Q": (True, "requeue exit values"),
           "-t": (True, "a termination deadline"), "-freq": (True, "CPU frequencies")}
INTERACTIVE = {"-I": "-I", "-Is": "-Is", "-Ip": "-Ip", "-IS": "-Is", "-ISs": "-Is", "-ISp": "-Ip"}


def _options(argv: list[str]) -> tuple[list[str], list[str], dict[str, str], str | None]:
    """bsub's options as BSUB table words, the command, the options only kept, and the interactive flag."""
    from xce.cli.jobscript import BSUB

    words: list[str] = []
    kept: dict[str, str] = {}
    interactive = None
    i, n = 0, len(argv)
    while i < n:
        word = argv[i]
        if word == "--":
            return words, argv[i + 1:], kept, interactive
        if word[:1] != "-" or word == "-":
            return words, argv[i:], kept, interactive
        i += 1
        if word in INTERACTIVE:
            interactive = INTERACTIVE[word]
            continue
        if word == "-K":
            interactive = interactive or "-K"
            continue
        name, value = word, None
        table = BSUB if word in BSUB else KEPT if word in KEPT else REFUSED if word in REFUSED else None
        if table is None:  # -Jname, -n4: the value in the same word
            name = next((o for o in sorted(BSUB, key=len, reverse=True) if word.startswith(o) and BSUB[o][0]), None)
            if name is None:
                raise Usage(f"illegal option -- {word[1:2] or word}")
            table, value = BSUB, word[len(name):]
        takes = table[name][0]
        if takes and value is None:
            if i >= n:
                raise Usage(f"option requires an argument -- {name[1:]}")
            value = argv[i]
            i += 1
        if table is REFUSED:
            raise Failed(f"{name}: {table[name][1]} is not available on this cluster. Job not submitted.")
        if table is KEPT:
            kept[table[name][1]] = value if takes else "yes"
        else:
            words += [name, value] if takes else [name]
    return words, [], kept, interactive


def _command(words: list[str]) -> list[str]:
    """LSF runs a command line with the shell; a job script given by name is run (and read) as one."""
    from xce.cli.submit import _job_script

    if not words:
        return []
    if len(words) >= 1 and os.path.isfile(words[0]) and _job_script(words[0]) is not None:
        return words
    return ["/bin/sh", "-c", " ".join(words)]


def run(argv: list[str]) -> int:
    from xce.compat.lsf._conf import unit_for_limits

    environ = dict(os.environ)  # the job's environment: the submitter's, as it was
    # The one unit for -M and rusage[mem=N]: the BSUB translation reads it from here.
    os.environ["LSF_UNIT_FOR_LIMITS"] = unit_for_limits()
    from xce.cli.jobscript import Refused, translate_bsub
    from xce.cli.spec import UsageError
    from xce.cli.submit import MAX_SCRIPT_BYTES, SUBMIT, job_request

    words, command, kept, interactive = _options(argv)
    try:
        xce_words = translate_bsub(words) + [w for k, v in kept.items() for w in ("--record", f"{k}={v}")]
        if interactive and interactive != "-K":
            xce_words.append(interactive)
        given = SUBMIT.parse([*xce_words, "--", *_command(command)])
        stdin = None if sys.stdin is None or sys.stdin.isatty() else \
            (lambda: sys.stdin.buffer.read(MAX_SCRIPT_BYTES + 1))
        body = job_request(given, stdin=stdin, environ=environ, cwd=os.getcwd(), host=os.uname().nodename)
    except (Refused, UsageError, ValueError) as exc:
        raise Failed(f"{str(exc).rstrip('.')}. Job not submitted.") from None
    if not command and not body.get("script"):
        raise Failed("No command given. Job not submitted.")
    return _submit(body, interactive)


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


main = main_of("bsub", USAGE, run)
