"""``xce launch``: start a command as tasks on the hosts of the job it runs in (LSF ``blaunch``,
Slurm ``srun`` inside an allocation).

It talks to the task server of each host's worker (:mod:`xce.worker.tasks`) with the job's launch
key, both from the job's environment (``XCE_TASK_SERVERS``, ``XCE_LAUNCH_KEY``), so it needs no
token and no controller: the tasks start at once, as the job's owner, inside the job's container
on their host. Task ids run 0..N-1 in host order, each host taking as many tasks as the placement
gave it (``XCE_HOSTS``) unless ``-n`` asks for fewer.
"""

from __future__ import annotations

from xce.cli.spec import Arg, Command, Opt

#: Signals passed on to every task (SIGINT from a terminal, SIGTERM from a kill, the user signals).
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def launch(command: list[str], tasks: int | None, hosts: str | None, label: bool) -> int:
    import json
    import os
    import signal
    import socket
    import sys
    import threading

    from xce.worker import taskauth

    def refuse(message: str) -> int:
        print(f"xce launch: {message}", file=sys.stderr)
        return 1

    if not command:
        return refuse("no command given (xce launch [-n N] [--hosts H1,H2] -- CMD ARGS)")
    jobid = os.environ.get("XCE_JOBID")
    key = os.environ.get("XCE_LAUNCH_KEY")
    if not jobid or not key:
        return refuse("not inside a job (XCE_JOBID and XCE_LAUNCH_KEY are not set): run it from a job's command")
    try:
        held = [(h, int(n)) for h, _, n in (part.rpartition(":") for part in os.environ.get("XCE_HOSTS", "").split())]
        servers = dict(part.split("=", 1) for part in os.environ.get("XCE_TASK_SERVERS", "").split())
    except ValueError:
        return refuse("XCE_HOSTS or XCE_TASK_SERVERS of this job is malformed")
    counts: dict[str, int] = {}
    for h, n in held:
        counts[h] = counts.get(h, 0) + n
    chosen = list(counts)
    if hosts:
        chosen = [h.strip() for h in hosts.split(",") if h.strip()]
        other = [h for h in chosen if h not in counts]
        if other:
            return refuse(f"job {jobid} holds no slots on {', '.join(other)} (its hosts: {' '.join(counts)})")
        chosen = list(dict.fromkeys(chosen))
    room = sum(counts[h] for h in chosen)
    n = room if tasks is None else tasks
    if n > room:
        return refuse(f"{n} tasks asked for, but job {jobid} holds {room} slot(s) on {', '.join(chosen)}")
    missing = [h for h in chosen if h not in servers]
    if missing:
        return refuse(f"no task server known for {', '.join(missing)} (its worker did not advertise one)")
    share: list[tuple[str, list[int]]] = []
    next_id = 0
    for h in chosen:
        k = min(counts[h], n - next_id)
        if k > 0:
            share.append((h, list(range(next_id, next_id + k))))
            next_id += k

    out_lock = threading.Lock()
    conns: dict[str, socket.socket] = {}
    exits: dict[int, int] = {}
    failures: list[str] = []
    failed = threading.Event()
    request = {"jobid": int(jobid), "argv": command, "cwd": os.getcwd(), "env": dict(os.environ), "ntasks": n}

    def emit(tid: int, stream: str, line: str) -> None:
        text = f"{tid}: {line}\n" if label else line + "\n"
        f = sys.stdout if stream == "out" else sys.stderr
        with out_lock:
            f.write(text)
            f.flush()

    def run_host(host: str, ids: list[int]) -> None:
        addr, _, port = servers[host].rpartition(":")
        try:
            s = socket.create_connection((addr.strip("[]"), int(port)), timeout=10)
            greeting = b""
            while not greeting.endswith(b"\n"):  # the server speaks first: a nonce to sign
                chunk = s.recv(256)
                if not chunk or len(greeting) > 4096:
                    raise OSError("the task server closed the connection before greeting")
                greeting += chunk
            s.settimeout(None)
            signed = taskauth.sign(key, str(json.loads(greeting)["nonce"]), {**request, "tasks": ids})
            s.sendall((json.dumps(signed) + "\n").encode())
        except (OSError, ValueError, KeyError, TypeError) as exc:
            failures.append(f"cannot reach the worker of {host} at {servers[host]}: {exc}")
            failed.set()
            return
        conns[host] = s
        done = False
        buf = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    raw, buf = buf.split(b"\n", 1)
                    msg = json.loads(raw)
                    if "line" in msg:
                        emit(msg["task"], msg["stream"], msg["line"])
                    elif "exit" in msg:
                        exits[msg["task"]] = int(msg["exit"])
                    elif "error" in msg:
                        failures.append(f"on {host}: {msg['error']}")
                        failed.set()
                    elif msg.get("done"):
                        done = True
        except (OSError, ValueError):
            pass
        if not done and not failed.is_set():
            failures.append(f"lost the connection to the worker of {host} before its tasks ended")
            failed.set()

    def forward(signum: int, _frame=None) -> None:
        for s in list(conns.values()):
            try:
                s.sendall((json.dumps({"signal": signum}) + "\n").encode())
            except OSError:
                pass

    for name in FORWARDED:
        signal.signal(getattr(signal, name), forward)
    threads = [threading.Thread(target=run_host, args=(h, ids), daemon=True) for h, ids in share]
    for t in threads:
        t.start()
    killed = False
    while any(t.is_alive() for t in threads):
        if failed.is_set() and not killed:
            killed = True
            forward(signal.SIGKILL)  # one host could not run its share: the launch fails as a whole
        for t in threads:
            t.join(0.05)
    if failures:
        for f in dict.fromkeys(failures):
            print(f"xce launch: {f}", file=sys.stderr)
        return max([1, *exits.values()])
    return max(exits.values(), default=0)


COMMAND_SPECS = [Command(
    "launch", "Run a command as the tasks of the current job on its hosts, like blaunch or srun: everything after -- "
              "is the command. Output comes back line by line; the exit status is the highest of the tasks'.",
    [
        Arg("command", many=True, help="The command and its arguments."),
        Opt("tasks", ("-n", "--tasks"), int, None, min=1, metavar="N", show_default=False,
            help="Number of tasks [default: every slot the job holds on the chosen hosts]."),
        Opt("hosts", ("--hosts",), metavar="H1,H2", help="Only these hosts of the job [default: all of them]."),
        Opt("label", ("-l", "--label"), bool, False, help="Prefix each output line with its task id (\"3: ...\")."),
    ],
    launch,
    interspersed=False,
    examples=("xce submit -n 6 -R \"span[ptile=2]\" -- xce launch -l sh -c 'echo $XCE_HOST $XCE_TASK_ID'",
              "xce launch --hosts node1,node2 -n 2 -- ./server"),
)]
