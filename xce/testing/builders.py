"""Fluent builders for job, host and queue specs."""

from __future__ import annotations

from typing import Any

from xce.core.specs import HostSpec, JobSpec, QueueSpec


def to_bytes(size: str | int) -> int:
    """``"16G"`` -> bytes in the one quantity grammar; a bare number (or an int) means MiB."""
    from xce.core.quantity import parse_quantity

    return parse_quantity("mem", str(size))


class JobBuilder:
    def __init__(self, jobid: int) -> None:
        self._kw: dict[str, Any] = {"jobid": jobid, "user": "alice", "queue": "normal"}
        self._rusage: list[str] = []
        self._clauses: list[str] = []

    def tasks(self, n: int) -> "JobBuilder":
        self._kw["tasks"] = n
        return self

    def user(self, u: str) -> "JobBuilder":
        self._kw["user"] = u
        return self

    def queue(self, q: str) -> "JobBuilder":
        self._kw["queue"] = q
        return self

    def priority(self, p: int) -> "JobBuilder":
        self._kw["priority"] = p
        return self

    def at(self, queue_time: int) -> "JobBuilder":
        self._kw["queue_time"] = queue_time
        return self

    def project(self, p: str) -> "JobBuilder":
        self._kw["project"] = p
        return self

    def type(self, t: str) -> "JobBuilder":
        self._kw["job_type"] = t
        return self

    def limit(self, seconds: int) -> "JobBuilder":
        """The job's run limit (``xce submit --time``), in seconds."""
        self._kw["run_limit"] = seconds
        return self

    def exclusive(self, on: bool = True) -> "JobBuilder":
        """No other job on its hosts while it runs (``xce submit -x``)."""
        self._kw["exclusive"] = on
        return self

    def rusage(self, text: str) -> "JobBuilder":
        self._rusage.append(text)
        return self

    def select(self, expr: str) -> "JobBuilder":
        self._clauses.append(f"select[{expr}]")
        return self

    def span(self, text: str) -> "JobBuilder":
        self._clauses.append(f"span[{text}]")
        return self

    def request(self, text: str) -> "JobBuilder":
        self._kw["request"] = text
        return self

    def spec(self) -> JobSpec:
        kw = dict(self._kw)
        if "request" not in kw:
            parts = list(self._clauses)
            if self._rusage:
                parts.append("rusage[" + ":".join(self._rusage) + "]")
            kw["request"] = " ".join(parts)
        return JobSpec(**kw)


class HostBuilder:
    def __init__(self, name: str) -> None:
        self._name = name
        self._status = "ok"
        self._values: dict[str, Any] = {"slots": 1}

    def slots(self, n: int) -> "HostBuilder":
        self._values["slots"] = n
        return self

    def mem(self, size: str | int) -> "HostBuilder":
        self._values["mem"] = to_bytes(size)
        self._values.setdefault("maxmem", to_bytes(size))
        return self

    def maxmem(self, size: str | int) -> "HostBuilder":
        self._values["maxmem"] = to_bytes(size)
        return self

    def value(self, name: str, v: Any) -> "HostBuilder":
        self._values[name] = v
        return self

    def down(self) -> "HostBuilder":
        self._status = "unavail"
        return self

    def closed(self) -> "HostBuilder":
        """Closed by an administrator (``xceadmin host close``): up, but given no new job."""
        self._status = "closed"
        return self

    def spec(self) -> HostSpec:
        return HostSpec(name=self._name, status=self._status, values=dict(self._values))


def make_job(jobid: int) -> JobBuilder:
    return JobBuilder(jobid)


def make_host(name: str) -> HostBuilder:
    return HostBuilder(name)


def queue(name: str, priority: int = 0, **kw: Any) -> QueueSpec:
    if "preemptible_queues" in kw:
        kw["preemptible_queues"] = tuple(kw["preemptible_queues"])
    return QueueSpec(name=name, priority=priority, **kw)
