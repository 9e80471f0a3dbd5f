"""``scontrol``: the configuration probes and job actions workflow tools use.

``show config`` (``MinJobAge``, ``MaxArraySize``, ``ClusterName`` ...), ``show job [ID]``,
``show partition``, ``show node [NAME]``, ``show hostnames [LIST]``, ``requeue``, ``hold``/``uhold``, ``release``;
anything else is refused with Slurm's ``invalid keyword`` error.
"""

from __future__ import annotations

import os
import sys
import time

from xce.compat.slurm import _format as fmt, _ids as ids, _states as states, tables
from xce.compat.slurm._getopt import UsageError, parse, refuse

PROG = "scontrol"
#: getopt reads the options the help and the man page list (:mod:`xce.compat.slurm.tables`).
LONGS, SHORTS = tables.SCONTROL.getopt()
VERSION = "22.05.8"


def main(argv: list[str]) -> int:
    try:
        opts, words = parse(argv, LONGS, SHORTS, stop_at_operand=True)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    names = {n for n, _ in opts}
    if names & {"help", "usage"}:
        tables.show_help(PROG, names)
        return 0
    if "version" in names or words[:1] == ["version"]:
        sys.stdout.write(f"slurm {VERSION}\n")
        return 0
    if not words:
        return _err("no command given (scontrol show config, show job ID, requeue ID ...)")
    command, rest = words[0].lower(), words[1:]
    one_line = "oneliner" in names
    if command == "show":
        if not rest:
            return _err("too few arguments for keyword:show")
        what = rest[0].lower()
        if what == "hostnames" or what == "hostname":
            return _hostnames(rest[1:])
        if what in ("config", "conf", "configuration"):
            return _config()
        if what in ("job", "jobs", "jobid"):
            return _jobs(rest[1:], one_line)
        if what in ("partition", "partitions"):
            return _partitions(rest[1:], one_line)
        if what in ("node", "nodes"):
            return _nodes(rest[1:], one_line)
        return _err(f"invalid entity:{rest[0]} for keyword:show")
    if command in ("requeue", "requeuehold", "hold", "uhold", "release"):
        if not rest:
            return _err(f"too few arguments for keyword:{command}")
        return _act({"requeuehold": "requeue", "uhold": "hold"}.get(command, command), rest,
                    hold_after=command == "requeuehold", quiet="quiet" in names)
    return _err(f"invalid keyword: {words[0]}")


def _err(message: str) -> int:
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 1


def _hostnames(rest: list[str]) -> int:
    from xce.hostlist import expand

    text = rest[0] if rest else os.environ.get("SLURM_JOB_NODELIST", "")
    if not text:
        return _err("host list is empty")
    try:
        names = expand(text)
    except ValueError as exc:
        return _err(str(exc))
    sys.stdout.write("".join(f"{n}\n" for n in names))
    return 0


def _config() -> int:
    from xce.compat.slurm import _api
    from xce.jobref import MAX_ELEMENTS

    try:
        c = _api.client()
        me = _api.request(c, "GET", "/v1/whoami")
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    pairs = [("AccountingStorageType", "accounting_storage/xce"), ("ClusterName", me.get("cluster") or "xce"),
             ("DefMemPerNode", "UNLIMITED"), ("JobCompType", "jobcomp/none"), ("MaxArraySize", str(MAX_ELEMENTS)),
             ("MaxJobCount", "100000"), ("MinJobAge", f"{_api.MIN_JOB_AGE} sec"), ("PriorityType", "priority/xce"),
             ("SchedulerType", "sched/xce"), ("SelectType", "select/cons_tres"), ("SLURM_VERSION", VERSION)]
    out = [f"Configuration data as of {fmt.clock(time.time_ns())}"]
    out += [f"{k:<23} = {v}" for k, v in pairs]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _record(j: dict, now: float) -> list[str]:
    """One job as ``scontrol show job`` prints it: lines of ``Key=Value`` pairs."""
    head = f"JobId={j['jobid']}"
    if j.get("array_id") is not None:
        head += f" ArrayJobId={j['array_id']} ArrayTaskId={j['array_index']}"
    hosts = fmt.nodes(j)
    uid = _uid(j["user"])
    word = states.word(j)
    per_task = int(j.get("cpus_per_task") or 1)
    return [
        f"{head} JobName={j.get('name') or (j.get('command') or [''])[0].rpartition('/')[2]}",
        f"UserId={j['user']}({uid}) GroupId={j['user']}({uid}) MCS_label=N/A",
        f"Priority={j.get('priority') or 0} Nice=0 Account={j.get('project') or ''} QOS=normal",
        f"JobState={word} Reason={states.reason(j)} Dependency=(null)",
        f"Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode={states.exit_code(j)}",
        f"RunTime={fmt.elapsed(fmt.used(j, now))} TimeLimit={fmt.limit(j.get('run_limit'))} TimeMin=N/A",
        f"SubmitTime={fmt.clock(j.get('submit_time'), 'Unknown')} "
        f"EligibleTime={fmt.clock(j.get('begin_time') or j.get('submit_time'), 'Unknown')}",
        f"StartTime={fmt.clock(j.get('start_time'), 'Unknown')} EndTime={fmt.clock(j.get('end_time'), 'Unknown')} "
        "Deadline=N/A",
        f"Partition={j['queue']} AllocNode:Sid=(null):0",
        f"NodeList={','.join(hosts) or '(null)'}",
        f"BatchHost={hosts[0] if hosts else '(null)'}",
        f"NumNodes={len(hosts) or 1} NumCPUs={j['tasks']} NumTasks={max(1, j['tasks'] // per_task)} "
        f"CPUs/Task={per_task} ReqB:S:C:T=0:0:*:*",
        f"ReqTRES={fmt.tres(j, False, sorted_names=False)}",
        f"AllocTRES={fmt.tres(j, True, sorted_names=False) or '(null)'}",
        f"MinCPUsNode={per_task} {_min_memory(j)} MinTmpDiskNode=0",
        f"Command={_command(j)}",
        f"WorkDir={j.get('cwd') or '(null)'}",
        f"StdErr={_path(j, j.get('stderr') or j.get('stdout'))}",
        "StdIn=/dev/null",
        f"StdOut={_path(j, j.get('stdout'))}",
    ]


def _min_memory(j: dict) -> str:
    """XCE reserves memory per slot, a CPU: ``MinMemoryCPU``, but for a job of one slot, whose one
    CPU is its node's (``--mem``, as Slurm shows it: ``MinMemoryNode``); ``0`` without a request."""
    per_slot = fmt.mem_per_slot(j)
    if per_slot and j["tasks"] > 1:
        return f"MinMemoryCPU={fmt.memory(per_slot)}"
    return f"MinMemoryNode={fmt.memory(per_slot)}"


def _command(j: dict) -> str:
    """The script or program the job runs (``(null)`` where the viewer may not see it)."""
    argv = j.get("command")
    if not argv:
        return "(null)"
    if len(argv) == 3 and argv[:2] == ["/bin/sh", "-c"]:
        return argv[2]
    return _path(j, argv[0]) if "/" in argv[0] else argv[0]


def _path(j: dict, name: str | None) -> str:
    """A file of the job as an absolute path (relative names are to its working directory)."""
    if not name:
        return "(null)"
    if name.startswith("/") or not j.get("cwd"):
        return name
    return os.path.join(j["cwd"], name)


def _uid(user: str) -> int:
    import pwd

    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return 0


def _jobs(rest: list[str], one_line: bool) -> int:
    from xce.compat.slurm import _api

    refs = ids.split_list(rest[:1])
    bad = ids.check(PROG, refs)
    if bad is not None:
        sys.stderr.write("slurm_load_jobs error: Invalid job id specified\n")
        return 1
    now = time.time()
    params: dict = {"user": "all", "since": int(now) - _api.MIN_JOB_AGE}
    if refs:
        params["job"] = refs
    try:
        found = _api.jobs(_api.client(), **params)["jobs"]
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    if not found:
        if refs:
            sys.stderr.write("slurm_load_jobs error: Invalid job id specified\n")
            return 1
        sys.stdout.write("No jobs in the system\n")
        return 0
    out = []
    for j in found:
        lines = _record(j, now)
        out.append(" ".join(lines) if one_line else "\n   ".join(lines) + "\n")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _partitions(rest: list[str], one_line: bool) -> int:
    from xce.compat.slurm import _api

    try:
        queues, hosts = _api.partitions(_api.client())
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    from xce.hostlist import compress

    if rest:
        queues = [q for q in queues if q["name"] == rest[0]]
        if not queues:
            return _err(f"Partition {rest[0]} not found")
    names = compress([h["name"] for h in hosts])
    cpus = sum(int(h["resources"].get("slots", 0)) for h in hosts)
    out = []
    for q in queues:
        limit = q.get("max_run_limit") or q.get("run_limit")
        lines = [f"PartitionName={q['name']}",
                 "AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL",
                 f"Default={'YES' if q.get('default') else 'NO'} QoS=N/A",
                 f"MaxTime={'UNLIMITED' if not limit else fmt.duration(limit)} MinNodes=0 MaxNodes=UNLIMITED",
                 f"Nodes={names}",
                 f"PriorityTier={q.get('priority') or 0} State={'UP' if q.get('status') == 'open' else 'DOWN'}",
                 f"TotalCPUs={cpus} TotalNodes={len(hosts)}"]
        out.append(" ".join(lines) if one_line else "\n   ".join(lines) + "\n")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


#: sinfo's short state -> scontrol's word.
_NODE_STATES = {"idle": "IDLE", "alloc": "ALLOCATED", "mix": "MIXED", "down": "DOWN", "drain": "IDLE+DRAIN"}


def _node(h: dict, partitions: list[str]) -> list[str]:
    """One host as ``scontrol show node`` prints it: lines of ``Key=Value`` pairs."""
    from xce.compat.slurm.sinfo import _state, features, gres

    r = h["resources"]
    cpus = int(r.get("slots", 0))
    mem = int(r.get("maxmem", 0)) // 2**20
    load = h.get("load") or {}
    free = f"{int(load['mem']) // 2**20}" if isinstance(load.get("mem"), (int, float)) else "N/A"
    state = _NODE_STATES[_state(h)]
    lines = [f"NodeName={h['name']} Arch={str(r.get('type', 'unknown')).lower()} CoresPerSocket=1",
             f"CPUAlloc={min(h.get('slots_used', 0), cpus)} CPUTot={cpus} CPULoad={float(load.get('r1m', 0)):.2f}",
             f"AvailableFeatures={features(h)}", f"ActiveFeatures={features(h)}", f"Gres={gres(h)}",
             f"NodeAddr={h['name']} NodeHostName={h['name']} Version={VERSION}",
             f"RealMemory={mem} AllocMem=0 FreeMem={free} Sockets={cpus} Boards=1",
             f"State={state} ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A",
             f"Partitions={','.join(partitions)}",
             f"CfgTRES=cpu={cpus},mem={mem}M,billing={cpus}" + (f",gres/gpu={int(r['xce.io/gpu'])}"
                                                                 if r.get("xce.io/gpu") else "")]
    if h.get("closed") or h.get("status") != "ok":
        lines.append(f"Reason={h.get('closed') or 'Not responding'}")
    return lines


def _nodes(rest: list[str], one_line: bool) -> int:
    from xce.compat.slurm import _api

    try:
        queues, hosts = _api.partitions(_api.client())
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    if rest:
        hosts = [h for h in hosts if h["name"] == rest[0]]
        if not hosts:
            return _err(f"Node {rest[0]} not found")
    out = []
    for h in hosts:
        lines = _node(h, [q["name"] for q in queues])
        out.append(" ".join(lines) if one_line else "\n   ".join(lines) + "\n")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _act(action: str, refs_text: list[str], *, hold_after: bool, quiet: bool) -> int:
    from xce.compat.slurm import _api

    refs = ids.split_list(refs_text)
    bad = ids.check(PROG, refs)
    if bad is not None:
        return _err(f"Invalid job id specified for job {bad}")
    code = 0
    try:
        c = _api.client()
        for step in [action] + (["hold"] if hold_after else []):
            answer = _api.request(c, "POST", "/v1/jobs/act", {"action": step, "jobs": refs})
            for r in answer.get("results", []):
                if not r.get("ok"):
                    code = 1
                    if not quiet:
                        what = "Invalid job id specified" if r.get("status") == 404 else r.get("message")
                        sys.stderr.write(f"{step.capitalize()} of job {r.get('job')} failed: {what}\n")
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
