"""A multi-host test bed on one machine: each host a network namespace, all joined by a bridge.

Every other cluster test runs all its hosts on 127.0.0.1, so nothing there ever crosses a network
between hosts. Here each host is a network namespace (``ip netns add``) with one end of a veth
pair; the other end is a port of a bridge in the root namespace. The bridge has the first address
of a private /24, each host the next ones. The controller (and scheduler) listen on the bridge
address in the root namespace; one worker runs inside each namespace with its own host name, so a
job, its output, ``xce launch`` and every report cross the bridge for real.

    with NetBed(tmp_path, hosts=3, slots=2) as bed:
        bed.cli("submit", "-n", "6", "--", "hostname")

Names carry the pid of the process that made them (``xb<pid><seq>``, netns ``xce-xb<pid><seq>-h1``),
so parallel runs never collide, and a bed whose process died is recognised by the next one, which
removes its processes, namespaces and bridge before building its own. :meth:`NetBed.stop` removes
everything it made even when a test fails halfway or the bed never finished starting.

Needs root and iproute2 (as the development and CI machines have). The high-availability tests can
start several controllers on the same bridge: a bed is a :class:`~xce.cluster.LocalCluster`.
"""

from __future__ import annotations

import fcntl
import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from xce.cluster.local import LocalCluster
from xce.procs import pid_alive
from xce.testing.wait import wait_for  # noqa: F401  (tests import it from here)

#: Host beds take /24 networks from here; one not routed on this machine is chosen per bed.
SUPERNET = ipaddress.ip_network("10.231.0.0/16")
LOCK = Path("/run/lock/xce-netbed.lock")
_NAME = re.compile(r"^xb(\d+)([a-z])$")
_NS = re.compile(r"^xce-xb(\d+)([a-z])-")
_seq = 0


class NetBedError(RuntimeError):
    """The bed could not be built; the message names the step and what ``ip`` said."""


def ip(*args: str, check: bool = True) -> str:
    """Run one ``ip`` command; a failure raises with the command and its message on one line."""
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise NetBedError(f"ip {' '.join(args)}: {r.stderr.strip() or r.stdout.strip() or r.returncode}")
    return r.stdout


def namespaces() -> list[str]:
    return [line.split()[0] for line in ip("netns", "list").splitlines() if line.strip()]


def ns_pids(ns: str) -> list[int]:
    """Every process whose network namespace is ``ns`` (the worker, its jobs, their children)."""
    return [int(p) for p in ip("netns", "pids", ns, check=False).split()]


def _kill_all(ns: str, timeout: float = 5.0) -> None:
    """SIGKILL every process in ``ns`` until none is left (a dying worker may still fork once)."""
    deadline = time.monotonic() + timeout
    while (pids := [p for p in ns_pids(ns) if pid_alive(p)]) and time.monotonic() < deadline:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    return pid == os.getpid() or pid_alive(pid)


def clean_leftovers() -> list[str]:
    """Remove the namespaces and bridges of beds whose process is gone (a crashed earlier run).

    Returns what was removed, for the log of whoever asked."""
    removed = []
    for ns in namespaces():
        m = _NS.match(ns)
        if m and not _alive(int(m.group(1))):
            _kill_all(ns)
            ip("netns", "del", ns, check=False)
            removed.append(f"netns {ns}")
    for link in json.loads(ip("-j", "link", "show") or "[]"):
        name = link.get("ifname", "")
        base = name.split("v", 1)[0] if name.startswith("xb") else ""
        m = _NAME.match(base)
        if m and not _alive(int(m.group(1))):
            ip("link", "del", name, check=False)
            removed.append(f"link {name}")
    return removed


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 of :data:`SUPERNET` that no address or route of this machine uses (under :data:`LOCK`)."""
    used = []
    for entry in json.loads(ip("-j", "-4", "addr", "show") or "[]"):
        for a in entry.get("addr_info", []):
            used.append(ipaddress.ip_network(f"{a['local']}/{a['prefixlen']}", strict=False))
    for r in json.loads(ip("-j", "-4", "route", "show") or "[]"):
        dst = r.get("dst", "")
        if dst and dst != "default":
            used.append(ipaddress.ip_network(dst if "/" in dst else dst + "/32", strict=False))
    for net in list(SUPERNET.subnets(new_prefix=24))[1:-1]:
        if not any(net.overlaps(u) for u in used):
            return net
    raise NetBedError(f"no free /24 left in {SUPERNET} for a test bed")


class NetBed(LocalCluster):
    """A :class:`~xce.cluster.LocalCluster` whose workers are hosts ``h1``..``hN`` in their own
    network namespaces, the controller on the bridge address."""

    def __init__(self, state_dir: str | os.PathLike[str], hosts: int = 3, slots: int = 2, **options: Any) -> None:
        global _seq
        if os.geteuid() != 0:
            raise NetBedError("the multi-host test bed needs root (network namespaces, veth pairs, a bridge)")
        options.setdefault("round_interval", 0.05)
        options.setdefault("report_interval", 0.5)
        super().__init__(state_dir, hosts, slots, **options)
        self.config = self._bed_config(self.config)
        self.tag = f"xb{os.getpid()}{chr(ord('a') + _seq % 26)}"
        _seq += 1
        self.bridge = self.tag
        self.subnet: ipaddress.IPv4Network | None = None
        self.made_ns: list[str] = []
        self.made_links: list[str] = []

    def _bed_config(self, given: Path | None) -> Path:
        """The cluster's configuration with plain HTTP accepted on the bridge: it is private to this
        machine, and the tests look at what crosses it."""
        text = given.read_text() if given else ""
        if re.search(r"^\[controller\]", text, re.M):
            text = re.sub(r"^\[controller\][^\n]*\n", lambda m: m.group(0) + "insecure_http = true\n", text, count=1,
                          flags=re.M)
        else:
            text += "\n[controller]\ninsecure_http = true\n"
        path = self.state_dir / "netbed.toml"
        path.write_text(text)
        return path

    # -- names and addresses ---------------------------------------------------------------
    @property
    def worker_names(self) -> list[str]:
        return [f"h{i}" for i in range(1, self.nworkers + 1)]

    def ns(self, host: str) -> str:
        """The network namespace of ``host`` (``h1``...)."""
        return f"xce-{self.tag}-{host}"

    @property
    def bridge_address(self) -> str:
        assert self.subnet is not None
        return str(self.subnet.network_address + 1)

    def address(self, host: str) -> str:
        """The address of ``host`` on the bridge."""
        assert self.subnet is not None
        return str(self.subnet.network_address + 1 + self.worker_names.index(host) + 1)

    # -- building and removing -------------------------------------------------------------
    def start(self) -> "NetBed":
        try:
            self._build()
            super().start()
        except BaseException:
            self.stop()
            raise
        return self

    def _build(self) -> None:
        LOCK.parent.mkdir(parents=True, exist_ok=True)
        with open(LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # two beds must not pick the same subnet
            clean_leftovers()
            self.subnet = _free_subnet()
            ip("link", "add", self.bridge, "type", "bridge")
            self.made_links.append(self.bridge)
            ip("addr", "add", f"{self.bridge_address}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for k, host in enumerate(self.worker_names, 1):
            ns, outside, inside = self.ns(host), f"{self.tag}v{k}", f"{self.tag}p{k}"
            ip("netns", "add", ns)
            self.made_ns.append(ns)
            ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            self.made_links.append(outside)
            ip("link", "set", inside, "netns", ns)
            ip("-n", ns, "link", "set", inside, "name", "eth0")
            ip("-n", ns, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("link", "set", outside, "master", self.bridge)
            ip("link", "set", outside, "up")
        # The bridge forwards once its ports have left the learning state; wait until every host
        # reaches the bridge address (a TCP connect to a closed port is refused: that is an answer).
        for host in self.worker_names:
            self._wait_reachable(host)

    def _wait_reachable(self, host: str, timeout: float = 20.0) -> None:
        probe = ("import socket,sys\ns=socket.socket();s.settimeout(0.5)\n"
                 "try: s.connect((sys.argv[1], 9))\nexcept ConnectionRefusedError: sys.exit(0)\n"
                 "except OSError: sys.exit(1)\nsys.exit(0)")
        deadline = time.monotonic() + timeout
        while True:
            r = subprocess.run([*self.enter(host), sys.executable, "-c", probe, self.bridge_address],
                               capture_output=True, timeout=30)
            if r.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise NetBedError(f"host {host} ({self.address(host)}) cannot reach the bridge at "
                                  f"{self.bridge_address}")
            time.sleep(0.2)

    def enter(self, host: str) -> list[str]:
        """The prefix that runs a command on ``host``: its network namespace only. (``ip netns
        exec`` would also remount /sys, hiding the control groups a worker puts its jobs in.)"""
        return ["nsenter", f"--net=/run/netns/{self.ns(host)}", "--"]

    def _argv(self, key: str, args: list[str]) -> list[str]:
        argv = super()._argv(key, args)
        if key in self.worker_names:
            return [*self.enter(key), *argv]
        if key in self.controller_keys:
            i = argv.index("controller") + 1
            return [*argv[:i], "--host", self.bridge_address, *argv[i:]]
        return argv

    def stop(self, timeout: float = 15.0) -> list[int]:
        """Stop the cluster, then kill whatever still runs in the hosts' namespaces and remove
        the namespaces, the veth pairs and the bridge."""
        killed: list[int] = []
        try:
            killed = super().stop(timeout)
        finally:
            for ns in self.made_ns:
                _kill_all(ns)
                ip("netns", "del", ns, check=False)
            for link in reversed(self.made_links):
                if ip("link", "show", link, check=False):
                    ip("link", "del", link, check=False)
            self.made_ns.clear()
            self.made_links.clear()
        return killed

    # -- using it --------------------------------------------------------------------------
    def cli(self, *args: str, host: str | None = None, check: bool = True, timeout: float = 120,
            env: dict[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
            ) -> subprocess.CompletedProcess:
        """Run ``xce ARGS`` as a user would, in the root namespace or on ``host``."""
        cmd = [sys.executable, "-m", "xce.cli.main", *args]
        if host is not None:
            cmd = [*self.enter(host), *cmd]
        r = subprocess.run(cmd, env={**self.env(), **(env or {})}, cwd=cwd or self.state_dir, capture_output=True,
                           text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"xce {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        return r

    def submit(self, *args: str, cwd: str | os.PathLike[str] | None = None) -> int:
        return int(json.loads(self.cli("submit", "--json", *args, cwd=cwd).stdout)["jobid"])

    def job(self, jobid: int) -> dict[str, Any]:
        return json.loads(self.cli("jobs", "-l", "--json", str(jobid)).stdout)["jobs"][0]

    def wait_state(self, jobid: int, states: str | tuple[str, ...], timeout: float = 60.0) -> dict[str, Any]:
        states = (states,) if isinstance(states, str) else states
        return wait_for(lambda: (j := self.job(jobid))["state"] in states and j, timeout,
                        lambda: f"job {jobid} to reach {states} (now {self.job(jobid)['state']})")

    def pids(self, host: str) -> list[int]:
        """The processes running on ``host`` (its worker included)."""
        return [p for p in ns_pids(self.ns(host)) if pid_alive(p)]




try:
    import pytest
except ImportError:  # the bed itself works without pytest; only the fixture needs it
    pytest = None

if pytest is not None:
    @pytest.fixture
    def netbed(tmp_path_factory):
        """A factory: ``netbed(hosts=3, slots=2, **LocalCluster options)`` -> a started :class:`NetBed`,
        stopped and removed at teardown whatever happened."""
        beds: list[NetBed] = []

        def make(hosts: int = 3, slots: int = 2, **options: Any) -> NetBed:
            bed = NetBed(tmp_path_factory.mktemp("netbed") / "state", hosts, slots, **options)
            beds.append(bed)
            return bed.start()

        try:
            yield make
        finally:
            for bed in beds:
                bed.stop()
