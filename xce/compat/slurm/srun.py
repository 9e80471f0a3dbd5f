"""``srun``: run tasks. Inside a job, through ``xce launch`` (each task gets ``SLURM_PROCID``,
``SLURM_LOCALID``, ``SLURM_NTASKS``; ``-l`` labels lines; the exit status is the highest task's);
outside one, as ``salloc`` + ``srun``: an interactive job of its own runs the tasks, on a
pseudo-terminal with ``--pty``.

A script on standard input (``srun sh -s < job.sh``) reaches the tasks: tasks have no standard
input of their own, so a file or pipe given here is read and handed to each task's command.
"""

from __future__ import annotations

import os
import sys

from xce import jobfiles
from xce.compat.slurm import tables
from xce.compat.slurm._getopt import UsageError, parse, refuse

PROG = "srun"
#: The program's own options beside sbatch's job options (:mod:`xce.compat.slurm.tables`).
EXTRA, SHORTS = tables.own_names(tables.SRUN_OWN)
REFUSED = {"multi-prog": "--multi-prog is not offered here: give one command",
           "jobid": "--jobid: steps of another job cannot be started here",
           "het-group": "heterogeneous jobs are not offered here", "relative": "--relative is not offered here",
           "input": "--input: tasks here read no standard input of their own"}
#: Most bytes of standard input handed to the tasks (it travels in their environment).
MAX_STDIN = 128 * 1024


def main(argv: list[str]) -> int:
    from xce.compat.slurm import _alloc

    longs, shorts = _alloc.table(EXTRA, SHORTS, drop_shorts=("o", "e", "a"))
    try:
        opts, command = parse(argv, longs, shorts, stop_at_operand=True)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    given = dict(opts)
    names = {n for n, _ in opts}
    for name in names:
        if name in REFUSED:
            return _err(REFUSED[name])
    if names & {"help", "usage"}:
        from xce.compat.slurm.tables import show_help

        show_help(PROG, names, REFUSED)
        return 0
    if "version" in names:
        sys.stdout.write("slurm 22.05.8\n")
        return 0
    if not command:
        return _err("No command given to execute.")
    if os.environ.get("XCE_LAUNCH_KEY") and os.environ.get("XCE_JOBID"):
        return _inside(given, command, "pty" in names)
    return _outside(opts, given, command, "pty" in names)


def _err(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 1


def _count(given: dict, name: str) -> int | None:
    value = given.get(name)
    if value is None:
        return None
    low = str(value).partition("-")[0]
    if not low.isdigit() or int(low) < 1:
        raise UsageError(f"Invalid numeric value \"{value}\" for --{name}.")
    return int(low)


#: Per-task codes of ``--output``/``--error``: only the task knows its own (its rank, its host).
PER_TASK = ("%t", "%n", "%N")


def _expand(pattern: str, task: bool) -> str:
    """An output file name by the one rule (:mod:`xce.jobfiles`), from the job's environment; with
    ``task`` the per-task codes too, as task 0 on this host, else the result is still a pattern whose
    ``%t %n %N`` each task fills in (``_TASK_FILES``)."""
    env = os.environ
    jobid, array, index = (int(v) if v.isdigit() else None for v in (
        env.get("SLURM_JOB_ID", ""), env.get("SLURM_ARRAY_JOB_ID", ""), env.get("SLURM_ARRAY_TASK_ID", "")))
    known = jobfiles.values(jobid=jobid or 0, array_id=array, index=index, name=env.get("SLURM_JOB_NAME"),
                            user=env.get("USER", ""), host=os.uname().nodename if task else None)
    return jobfiles.expand(pattern, known, final=task)


def _appending(given: dict) -> bool:
    """``--open-mode``, else the job's own (``$SLURM_OPEN_MODE``, set from ``sbatch --open-mode``):
    a requeued job that appends (submitit's logs) keeps its earlier runs' lines."""
    return str(given.get("open-mode") or os.environ.get("SLURM_OPEN_MODE") or "t").startswith("a")


def _truncate(stream: str, path: str, append: bool = False) -> int:
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | (0 if append else os.O_TRUNC), 0o644))
    except OSError as exc:
        return _err(f"Could not open {stream} file {path}: {exc.strerror}")
    return 0


def _redirect(stream: str, pattern: str, append: bool) -> int:
    """``--output``/``--error F`` of a single task run here: this program's stream into F."""
    path = _expand(pattern, task=True)
    code = _truncate(stream, path, append)
    if code:
        return code
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    sys.stdout.flush() if stream == "output" else sys.stderr.flush()
    os.dup2(fd, 1 if stream == "output" else 2)
    os.close(fd)
    return 0


#: Each task opens its own output files: ``%t``, ``%n``, ``%N`` are its rank, host index and host.
_TASK_FILES = r"""
sub() {
  s=$1 r=
  while [ -n "$s" ]; do
    case $s in
      %%*) r=$r%; s=${s#%%};;
      %t*) r=$r${SLURM_PROCID:-0}; s=${s#%t};;
      %n*) r=$r${SLURM_NODEID:-0}; s=${s#%n};;
      %N*) r=$r${SLURMD_NODENAME:-}; s=${s#%N};;
      *) c=${s%"${s#?}"}; r=$r$c; s=${s#?};;
    esac
  done
  printf '%s' "$r"
}
o=$(sub "$XCE_SRUN_OUT") e=$(sub "$XCE_SRUN_ERR")
if [ -n "$o" ]; then if [ "$XCE_SRUN_OUT_SHARED$XCE_SRUN_APPEND" != 00 ]; then exec >>"$o"; else exec >"$o"; fi; fi
if [ -n "$e" ]; then if [ "$XCE_SRUN_ERR_SHARED$XCE_SRUN_APPEND" != 00 ]; then exec 2>>"$e"; else exec 2>"$e"; fi
elif [ -n "$o" ]; then exec 2>&1; fi
unset XCE_SRUN_OUT XCE_SRUN_ERR XCE_SRUN_OUT_SHARED XCE_SRUN_ERR_SHARED XCE_SRUN_APPEND
exec "$@"
"""


def _task_files(given: dict, command: list[str]) -> list[str] | int:
    """``command`` writing into ``--output``/``--error`` files (Slurm's default: errors with the output):
    a file all tasks share is truncated here once and appended to by each; one per task
    (``out.%t``: submitit's ``%j_%t_log.out``) is the task's own."""
    if given.get("output") is None and given.get("error") is None:
        return command
    for stream, key in (("output", "OUT"), ("error", "ERR")):
        pattern = given.get(stream)
        if pattern is None:
            os.environ.pop(f"XCE_SRUN_{key}", None)
            continue
        text = _expand(pattern, task=False)
        shared = not any(code in text.replace("%%", "") for code in PER_TASK)
        if shared:
            code = _truncate(stream, text.replace("%%", "%"), _appending(given))
            if code:
                return code
        os.environ[f"XCE_SRUN_{key}"] = text
        os.environ[f"XCE_SRUN_{key}_SHARED"] = "1" if shared else "0"
    os.environ["XCE_SRUN_APPEND"] = "1" if _appending(given) else "0"
    return ["/bin/sh", "-c", _TASK_FILES, "sh", *command]


def _stdin_command(command: list[str]) -> list[str]:
    """``command`` fed what a file or pipe on standard input holds (``srun sh -s < job.sh``)."""
    import stat

    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return command
    if os.isatty(0) or not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        return command
    if stat.S_ISFIFO(mode) and not __import__("select").select([0], [], [], 1.0)[0]:
        return command  # a pipe left open and unwritten (snakemake's slurm-jobstep): no input, do not wait
    data = sys.stdin.buffer.read(MAX_STDIN + 1)
    if not data:
        return command
    if len(data) > MAX_STDIN or b"\0" in data:
        raise UsageError(f"standard input larger than {MAX_STDIN // 1024} KiB (or binary) cannot be handed to "
                         "the tasks: put it in a file the command reads")
    os.environ["XCE_SRUN_STDIN"] = data.decode("utf-8", errors="replace")
    return ["/bin/sh", "-c", 'printf %s "$XCE_SRUN_STDIN" | { unset XCE_SRUN_STDIN; exec "$@"; }', "sh", *command]


def _inside(given: dict, command: list[str], pty: bool) -> int:
    """A job step: the tasks through ``xce launch`` on the job's hosts."""
    try:
        tasks = _count(given, "ntasks")
        nodes = _count(given, "nodes")
    except UsageError as exc:
        return _err(str(exc))
    if pty:  # an interactive step: this terminal is already the job's
        os.environ.update({"SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_NTASKS": "1"})
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            return _err(f"execve(): {command[0]}: {exc.strerror}")
    hosts = None
    if nodes is not None:
        held = [part.rpartition(":")[0] for part in os.environ.get("XCE_HOSTS", "").split()]
        held = list(dict.fromkeys(held))
        if nodes > len(held):
            return _err(f"Unable to create step for job {os.environ.get('SLURM_JOB_ID', '')}: Requested node "
                        "configuration is not available")
        hosts = ",".join(held[:nodes])
        tasks = tasks or nodes
    if tasks is None and os.environ.get("SLURM_NTASKS", "").isdigit():
        tasks = int(os.environ["SLURM_NTASKS"])
    command = _task_files(given, command)
    if isinstance(command, int):
        return command
    try:
        command = _stdin_command(command)
    except UsageError as exc:
        return _err(str(exc))
    from xce.cli.launch_cmd import launch

    sys.stdout.flush()
    code = launch(command, tasks, hosts, "label" in given)
    return code


def _outside(opts: list, given: dict, command: list[str], pty: bool) -> int:
    """``salloc`` + ``srun``: an interactive job whose command starts the tasks."""
    from xce.cli.jobscript import Refused
    from xce.compat.slurm import _alloc

    try:
        tasks = _count(given, "ntasks")
        if (tasks and tasks > 1) or "label" in given:  # the job's own srun starts its tasks
            files = [f"--{k}={given[k]}" for k in ("output", "error") if given.get(k) is not None]
            command = [sys.executable, "-m", "xce.compat.slurm.srun", *(["-l"] if "label" in given else []),
                       *(["-n", str(tasks)] if tasks else []), *files, *command]
        else:
            for stream in ("output", "error"):
                if given.get(stream) is not None:
                    code = _redirect(stream, given[stream], _appending(given))
                    if code:
                        return code
        job = _alloc.body(_alloc.job_words(opts), command, PROG)
    except Refused as exc:
        return _err(str(exc))
    except UsageError as exc:
        return _err(str(exc))
    return _alloc.run(PROG, job, raw=pty, announce=False)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
