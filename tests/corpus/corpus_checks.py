"""What each directive asked for, checked against what the job got.

The truth about a job comes from three places, none of them XCE's own reading of the script: the
controller's record of the job (queue, project, placement on hosts, run limit, flags it keeps), the
probe that ran inside the job (its environment, working directory, host, the memory limit of its
control group, its GPUs), and the files it left (output and error files). The expectations come
from LSF's and Slurm's documented meaning of each option (``man sbatch``, the bsub reference).

Each directive gets one verdict: honoured or not, how it was judged, and a note. "checked" means a
property of the job was compared with the request; "kept" means the option has no effect a test
cluster can observe (mail, QOS, the name of a reservation or of a cluster, accounting keys) and is
honoured when the job was accepted, ran, and its record carries the value.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field

from corpus_directives import Directive

UNLIMITED = 1 << 60
#: The option of a directive line the real program cannot read (its text says why).
UNREADABLE = "(unreadable)"
#: Slurm's array index of a job that is not an array element (%a).
NO_INDEX = "4294967294"


@dataclass
class Element:
    """One job as it ran: an array element, or the job itself."""

    rec: dict
    probe: dict | None  # {"env": {...}, "pwd", "uid", "memlimit"} or None when the probe left nothing

    @property
    def env(self) -> dict:
        return (self.probe or {}).get("env", {})

    @property
    def hosts(self) -> list[str]:
        return [p["host"] for p in self.rec.get("placement") or []]

    @property
    def slots(self) -> dict[str, int]:
        return {p["host"]: p["tasks"] for p in self.rec.get("placement") or []}

    @property
    def host(self) -> str | None:
        """The host the probe ran on (the job's first host)."""
        return self.env.get("XCE_HOST") or (self.hosts[0] if self.hosts else None)

    @property
    def gpus(self) -> int:
        devices = self.env.get("CUDA_VISIBLE_DEVICES", "")
        return len([d for d in devices.split(",") if d.strip()])


@dataclass
class Run:
    name: str
    kind: str
    directives: list[Directive]
    accepted: bool
    message: str  # what the front-end printed
    cwd: str
    elements: list[Element] = field(default_factory=list)
    everyone: list[dict] = field(default_factory=list)  # every job of the cluster (exclusivity)


@dataclass(frozen=True)
class Site:
    user: str
    home: str
    hosts: tuple[str, ...]
    features: dict  # host -> set of features (Slurm node features, LSF boolean resources)
    models: dict  # host -> model
    gpu_models: dict  # host -> GPU model
    gpus: int  # fake GPUs on each host
    host_mem: int  # bytes
    features_configured: bool  # whether this XCE took the features/models above
    gpu_models_configured: bool


@dataclass(frozen=True)
class Verdict:
    script: str
    directive: Directive
    ok: bool
    how: str  # "checked", "kept", "refused", "not run"
    note: str


# -- quantities as each program writes them ---------------------------------------------------------

_UNIT = {"": 1 << 20, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def slurm_mem(text: str) -> int:
    """``--mem`` and friends: a number, in MB unless a K/M/G/T suffix (a trailing B is allowed)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGTkmgt]?)[Bb]?\s*", text)
    if not m:
        raise ValueError(text)
    return int(float(m.group(1)) * _UNIT[m.group(2).upper()])


def lsf_mem(text: str, unit: str = "MB") -> int:
    """``-M`` and ``rusage[mem=]``: a bare number in LSF_UNIT_FOR_LIMITS, else its own unit."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGTkmgt]?)([Bb]?)\s*!?", text)
    if not m:
        raise ValueError(text)
    letter = m.group(2).upper() or unit[0]
    return int(float(m.group(1)) * _UNIT[letter])


def slurm_time(text: str) -> int:
    """``--time``: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, in seconds."""
    t = text.strip()
    days = 0
    if "-" in t:
        d, t = t.split("-", 1)
        days = int(d)
        parts = [int(x) for x in t.split(":")]
        h, m, s = (parts + [0, 0])[:3]
        return ((days * 24 + h) * 60 + m) * 60 + s
    parts = [int(x) for x in t.split(":")]
    if len(parts) == 1:
        return parts[0] * 60
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return (parts[0] * 60 + parts[1]) * 60 + parts[2]


def lsf_time(text: str) -> int:
    """``-W [hour:]minute``, in seconds."""
    parts = [int(x) for x in text.strip().split("/")[0].split(":")]
    return (parts[0] * 60 + parts[1]) * 60 if len(parts) == 2 else parts[0] * 60


def slurm_array(text: str) -> tuple[set[int], int | None]:
    """``--array=1-10:2,15%4``: the indices and the most running at once."""
    spec, _, limit = text.partition("%")
    out: set[int] = set()
    for part in spec.split(","):
        rng, _, step = part.partition(":")
        lo, _, hi = rng.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1, int(step or 1)))
    return out, int(limit) if limit else None


def lsf_array(name: str) -> tuple[str, set[int] | None, int | None]:
    """``-J "name[1-10:2,15]%4"``: the name, the indices (None: not an array), the most at once."""
    m = re.fullmatch(r"(.*?)\[([^\]]*)\](?:%(\d+))?", name)
    if not m:
        return name, None, None
    idx, _ = slurm_array(m.group(2))
    return m.group(1), idx, int(m.group(3)) if m.group(3) else None


# -- host conditions ----------------------------------------------------------------------------

def _py_eval(expr: str) -> bool:
    return bool(eval(expr, {"__builtins__": {}}, {}))  # noqa: S307 - built from booleans and literals only


def slurm_constraint(expr: str, features: set[str]) -> bool:
    """``--constraint``: names joined by & (and), | (or), [a|b] (one of, for all nodes), *N counts."""
    out = []
    for tok in re.findall(r"\*\d+|[A-Za-z0-9_.:\-]+|[&|\[\]()]|,", expr):
        if tok.startswith("*"):
            continue
        out.append({"&": " and ", "|": " or ", ",": " and ", "[": "(", "]": ")", "(": "(", ")": ")"}.get(
            tok, repr(tok in features)))
    return _py_eval("".join(out) or "True")


#: LSF's built-in numeric host resources; a condition on one is met by any test host unless it
#: compares memory with more than the host has.
_NUMERIC = {"mem", "maxmem", "swp", "maxswp", "tmp", "maxtmp", "ncpus", "ndisks", "nprocs", "ncores",
            "nthreads", "r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "cpuf", "slots", "maxslots"}


def lsf_select(expr: str, host: str, features: set[str], model: str | None, mem_mb: int) -> bool:
    """A ``select[...]`` condition (or a bare -R string) on one host."""
    tokens = re.findall(r"==|!=|>=|<=|&&|\|\||[<>!=()&|]|[A-Za-z_][A-Za-z0-9_.\-]*|\d+(?:\.\d+)?", expr)
    out, i = [], 0
    while i < len(tokens):
        tok = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if re.match(r"[A-Za-z_]", tok) and nxt in ("==", "!=", "=", ">=", "<=", ">", "<") and i + 2 < len(tokens):
            op = "==" if nxt == "=" else nxt
            rhs = tokens[i + 2]
            if tok == "model":
                left = repr(model)
            elif tok in ("hname", "host", "hostname"):
                left = repr(host)
            elif tok == "type":
                left, rhs = "'any'", ("any" if rhs == "any" else rhs)
            elif tok in ("mem", "maxmem"):
                left = str(mem_mb)
            elif tok in _NUMERIC:
                left = str(1 << 30)
            else:
                left = repr(tok in features)
            right = rhs if re.fullmatch(r"\d+(?:\.\d+)?", rhs) else repr(rhs)
            if tok == "type" and rhs == "any":
                out.append("True")
            else:
                out.append(f"({left} {op} {right})")
            i += 3
            continue
        out.append({"&&": " and ", "||": " or ", "&": " and ", "|": " or ", "!": " not ", "(": "(", ")": ")"}.get(
            tok, "True" if tok in ("any", "defined") else repr(tok in features)))
        i += 1
    return _py_eval("".join(out) or "True")


def resreq_sections(text: str) -> dict[str, list[str]]:
    """``select[..] rusage[..] span[..]``; a string without sections is a select condition."""
    found = re.findall(r"(select|rusage|span|order|same|cu|affinity)\s*\[([^\]]*)\]", text)
    if not found:
        return {"select": [text]}
    out: dict[str, list[str]] = {}
    for key, body in found:
        out.setdefault(key, []).append(body)
    return out


# -- output file names ----------------------------------------------------------------------------

def expand_slurm(pattern: str, rec: dict, user: str) -> str:
    jobid = str(rec["jobid"])
    array = rec.get("array_id")
    first = ((rec.get("placement") or [{}])[0].get("host") or "").split(".")[0]
    values = {"A": str(array or jobid), "a": str(rec["array_index"]) if array else NO_INDEX, "j": jobid,
              "J": jobid, "N": first, "n": "0", "s": "batch", "t": "0", "u": user, "x": rec.get("name") or ""}

    def sub(m: re.Match) -> str:
        if m.group(0) == "%%":
            return "%"
        value = values.get(m.group(2))
        if value is None:
            return m.group(0)
        return value.zfill(int(m.group(1))) if m.group(1) else value

    return re.sub(r"%%|%(\d*)([AajJNnstux])", sub, pattern)


def expand_lsf(pattern: str, rec: dict) -> str:
    array = rec.get("array_id")
    return pattern.replace("%J", str(array or rec["jobid"])).replace(
        "%I", str(rec["array_index"]) if array else "0")


# -- the checks ----------------------------------------------------------------------------------

#: Combinations the real program refuses, from its manual: (kind, options, the manual's words).
REAL_REFUSALS = (
    ("sbatch", ("--mem", "--mem-per-cpu", "--mem-per-gpu"),
     "man sbatch: the --mem, --mem-per-cpu and --mem-per-gpu options are mutually exclusive"),
    ("sbatch", ("--cpus-per-gpu", "--cpus-per-task"),
     "man sbatch, --cpus-per-gpu: not compatible with the --cpus-per-task option"),
)


class Checker:
    """The verdicts for one script's directives."""

    def __init__(self, run: Run, site: Site) -> None:
        self.run, self.site = run, site
        self.opts: dict[str, list[str | None]] = {}
        for d in run.directives:
            self.opts.setdefault(d.option, []).append(d.value)

    def last(self, option: str) -> str | None:
        values = self.opts.get(option)
        return values[-1] if values else None

    # what the job has -----------------------------------------------------------------------
    def cpus_per_task(self) -> int:
        return int(self.last("--cpus-per-task") or 1)

    def exclusive(self) -> bool:
        return "--exclusive" in self.opts or "-x" in self.opts and self.run.kind == "bsub" or "-nnodes" in self.opts

    def memlimit(self, e: Element) -> int | None:
        raw = (e.probe or {}).get("memlimit", "")
        if not raw or raw == "max" or not raw.isdigit() or int(raw) >= UNLIMITED:
            return None
        return int(raw)

    # verdicts ------------------------------------------------------------------------------
    def real_refusal(self) -> tuple[set[str], str] | None:
        """The options of this script that the real program refuses together, and why."""
        for kind, options, why in REAL_REFUSALS:
            present = {o for o in options if o in self.opts}
            if kind == self.run.kind and len(present) >= 2:
                return present, why
        return None

    def verdicts(self) -> list[Verdict]:
        run = self.run
        out = []
        real = self.real_refusal()
        if real is not None and not run.accepted:
            conflict, why = real
            if any(_names(run.message, d) for d in run.directives if d.option in conflict):
                return [Verdict(run.name, d, True, "refused", f"refused as the real program does ({why}): "
                                + _first_line(run.message)) for d in run.directives]
        for d in run.directives:
            if d.option == UNREADABLE:
                out.append(Verdict(run.name, d, not run.accepted, "refused", (
                    "refused, as the real program refuses it: " if not run.accepted else
                    "accepted, though the real program refuses it: ") + _first_line(run.message)))
                continue
            if real is not None and d.option in real[0] and run.accepted:
                out.append(Verdict(run.name, d, False, "checked", f"accepted, but {real[1]}"))
                continue
            if not run.accepted:
                named = _names(run.message, d, repeated=len(self.opts[d.option]) > 1)
                how = "refused" if named else "not run"
                out.append(Verdict(run.name, d, False, how, _first_line(run.message) if named else
                                   f"the script was refused: {_first_line(run.message)}"))
                continue
            unfinished = [e for e in run.elements if e.rec.get("state") != "DONE"]
            if not run.elements or unfinished:
                e = unfinished[0] if unfinished else None
                why = (f"job {e.rec['jobid']} is {e.rec.get('state')}: {e.rec.get('reason') or ''}".strip()
                       if e else "no job was found for the script")
                out.append(Verdict(run.name, d, False, "not run", why))
                continue
            try:
                ok, how, note = self.check(d)
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                ok, how, note = False, "checked", f"cannot be checked: {type(exc).__name__}: {exc}"
            out.append(Verdict(run.name, d, ok, how, note))
        return out

    def check(self, d: Directive) -> tuple[bool, str, str]:
        method = getattr(self, "_" + d.kind + "_" + d.option.lstrip("-").replace("-", "_"), None)
        if method is None:
            return self.kept(d)
        return method(d.value or "")

    def all_elements(self, test, what: str) -> tuple[bool, str, str]:
        bad = []
        for e in self.run.elements:
            ok, got = test(e)
            if not ok:
                bad.append(f"job {e.rec['jobid']}: {got}")
        return (not bad, "checked", what if not bad else f"{what}; got {'; '.join(bad[:3])}")

    def kept(self, d: Directive) -> tuple[bool, str, str]:
        """Accepted, ran, and the value is in the job's record."""
        if d.value in (None, ""):
            return True, "kept", "accepted; the job ran"
        blob = json.dumps([e.rec for e in self.run.elements])
        ok = all(d.value in json.dumps(e.rec) or d.value.strip('"') in json.dumps(e.rec) for e in self.run.elements)
        return ok, "kept", ("kept with the job" if ok else f"the job ran, but its record does not carry {d.value!r}"
                            f" ({len(blob)} bytes of record)")

    # both programs -------------------------------------------------------------------------
    def _name(self, want: str) -> tuple[bool, str, str]:
        return self.all_elements(lambda e: (e.rec.get("name") == want, repr(e.rec.get("name"))), f"name {want!r}")

    def _queue(self, names: list[str]) -> tuple[bool, str, str]:
        return self.all_elements(lambda e: (e.rec.get("queue") in names, e.rec.get("queue")), f"queue in {names}")

    def _project(self, want: str) -> tuple[bool, str, str]:
        return self.all_elements(lambda e: (e.rec.get("project") == want, e.rec.get("project")), f"project {want}")

    def _runlimit(self, seconds: int) -> tuple[bool, str, str]:
        def test(e):
            got = e.rec.get("run_limit")
            return got == seconds, f"run limit {got}"
        return self.all_elements(test, f"run limit {seconds} s")

    def _file(self, pattern: str, marker: str, expand) -> tuple[bool, str, str]:
        def test(e):
            path = os.path.join(e.rec.get("cwd") or self.run.cwd, expand(pattern, e.rec))
            try:
                with open(path, errors="replace") as f:
                    text = f.read()
            except OSError as exc:
                return False, f"{path}: {exc.strerror}"
            return marker in text, f"{path} lacks the job's {marker!r} line"
        return self.all_elements(test, f"file {pattern}")

    def _memory(self, want_of, what: str) -> tuple[bool, str, str]:
        def test(e):
            want = want_of(e)
            got = self.memlimit(e)
            if want is None:  # all of the node's memory
                return got is None or got >= self.site.host_mem * 0.9, f"limit {got}"
            return got is not None and abs(got - want) <= 1 << 20, f"limit {got} bytes, not {want}"
        return self.all_elements(test, what)

    def _exclusive_check(self) -> tuple[bool, str, str]:
        def test(e):
            if not e.rec.get("exclusive"):
                return False, "the job is not exclusive"
            mine = set(e.hosts)
            s0, e0 = e.rec.get("start_time"), e.rec.get("end_time")
            for other in self.run.everyone:
                if other["jobid"] == e.rec["jobid"] or not other.get("start_time"):
                    continue
                shared = mine & {p["host"] for p in other.get("placement") or []}
                end = other.get("end_time") or float("inf")
                if shared and other["start_time"] < (e0 or float("inf")) and s0 < end:
                    return False, f"job {other['jobid']} ran beside it on {sorted(shared)}"
            return True, ""
        return self.all_elements(test, "alone on its hosts")

    def _gpus(self, want_of, what: str, model: str | None = None) -> tuple[bool, str, str]:
        def test(e):
            got = f"{e.gpus} GPUs (CUDA_VISIBLE_DEVICES={e.env.get('CUDA_VISIBLE_DEVICES')!r})"
            if e.gpus != want_of(e):
                return False, got
            if model is None:
                return True, got
            if not self.site.gpu_models_configured:
                return False, f"{got}, but this XCE took no GPU models from xce.toml"
            wrong = [h for h in e.hosts if (self.site.gpu_models.get(h) or "").lower() != model.lower()]
            return not wrong, f"{got} on {wrong}, whose GPUs are not {model}"
        return self.all_elements(test, what + (f" of model {model}" if model else ""))

    @staticmethod
    def _gpu_model(v: str) -> str | None:
        """The type in ``gpu:a100:2``, ``a100:2``: None where only a count is given."""
        parts = [p for p in v.split(":") if p and p != "gpu" and not p.isdigit()]
        return parts[0] if parts else None

    def _hosts_ok(self, test_host, what: str) -> tuple[bool, str, str]:
        def test(e):
            bad = [h for h in e.hosts if not test_host(h)]
            return not bad, f"placed on {bad}"
        return self.all_elements(test, what)

    def _array(self, indices: set[int], limit: int | None) -> tuple[bool, str, str]:
        got = sorted(e.rec.get("array_index") for e in self.run.elements)
        if got != sorted(indices):
            return False, "checked", f"array {sorted(indices)[:10]}...; got elements {got[:10]}"
        if limit is None:
            return True, "checked", f"{len(indices)} elements"
        spans = sorted((e.rec["start_time"], e.rec["end_time"]) for e in self.run.elements)
        most = max(sum(1 for s, t in spans if s <= start < t) for start, _ in spans)
        return most <= limit, "checked", f"{len(indices)} elements, at most {limit} at once (saw {most})"

    # Slurm ----------------------------------------------------------------------------------
    def _sbatch_job_name(self, v):
        return self._name(v)

    def _sbatch_partition(self, v):
        return self._queue([p.strip() for p in v.split(",")])

    def _sbatch_account(self, v):
        return self._project(v)

    def _sbatch_time(self, v):
        return self._runlimit(slurm_time(v))

    def _sbatch_output(self, v):
        return self._file(v, "corpus-probe-out", lambda p, rec: expand_slurm(p, rec, self.site.user))

    def _sbatch_error(self, v):
        return self._file(v, "corpus-probe-err", lambda p, rec: expand_slurm(p, rec, self.site.user))

    def _sbatch_ntasks(self, v):
        n, c = int(v), self.cpus_per_task()

        def test(e):
            slots = sum(e.slots.values())
            env = e.env.get("SLURM_NTASKS")
            ok = env == str(n) and (slots == n * c or self.exclusive() and slots >= n * c)
            return ok, f"SLURM_NTASKS={env}, {slots} CPUs on {len(e.hosts)} host(s)"
        return self.all_elements(test, f"{n} tasks of {c} CPUs")

    def _sbatch_nodes(self, v):
        lo, _, hi = v.partition("-")
        lo_n, hi_n = int(lo), int(hi or lo)
        return self.all_elements(lambda e: (lo_n <= len(e.hosts) <= hi_n, f"{len(e.hosts)} hosts {e.hosts}"),
                                 f"{v} node(s)")

    def _sbatch_ntasks_per_node(self, v):
        k, c = int(v), self.cpus_per_task()
        capped = "--ntasks" in self.opts

        def test(e):
            per = e.slots
            if self.exclusive():
                ok = all(n >= k * c for n in per.values())
            elif capped:
                ok = all(n <= k * c for n in per.values())
            else:
                ok = all(n == k * c for n in per.values())
            return ok, f"CPUs per host {per}"
        return self.all_elements(test, f"{k} tasks of {c} CPUs on each node")

    _sbatch_tasks_per_node = _sbatch_ntasks_per_node

    def _sbatch_cpus_per_task(self, v):
        c = int(v)

        def test(e):
            env = e.env.get("SLURM_CPUS_PER_TASK")
            return env == str(c) and all(n % c == 0 for n in e.slots.values()), \
                f"SLURM_CPUS_PER_TASK={env}, CPUs per host {e.slots}"
        return self.all_elements(test, f"{c} CPUs per task")

    def _sbatch_mincpus(self, v):
        return self.all_elements(lambda e: (all(n >= int(v) for n in e.slots.values()), f"CPUs {e.slots}"),
                                 f"at least {v} CPUs a node")

    def _sbatch_mem(self, v):
        want = slurm_mem(v)
        return self._memory(lambda e: None if want == 0 else want,
                            "all of the node's memory" if want == 0 else f"memory limit {want >> 20} MiB")

    def _sbatch_mem_per_cpu(self, v):
        per = slurm_mem(v)
        return self._memory(lambda e: per * e.slots.get(e.host, 0), f"{per >> 20} MiB per CPU")

    def _sbatch_mem_per_gpu(self, v):
        per = slurm_mem(v)
        return self._memory(lambda e: per * e.gpus if e.gpus else -1, f"{per >> 20} MiB per GPU")

    @staticmethod
    def _count(v: str) -> int:
        return int(v.rpartition(":")[2]) if v.rpartition(":")[2].isdigit() else 1

    def _sbatch_gres(self, v):
        gpus = [g for g in v.split(",") if g.split(":")[0] == "gpu"]
        if not gpus:
            return self.kept(Directive("sbatch", 0, "--gres", v, v))
        n = self._count(gpus[0])
        return self._gpus(lambda e: n, f"{n} GPU(s) a node", self._gpu_model(gpus[0]))

    def _sbatch_gpus_per_node(self, v):
        n = self._count(v)
        return self._gpus(lambda e: n, f"{n} GPU(s) a node", self._gpu_model(v))

    def _sbatch_gpus(self, v):
        n = self._count(v)
        return self.all_elements(lambda e: (e.gpus >= 1 and (len(e.hosts) > 1 or e.gpus == n), f"{e.gpus} GPUs"),
                                 f"{n} GPU(s) in all")

    def _sbatch_gpus_per_task(self, v):
        n, c = self._count(v), self.cpus_per_task()
        return self._gpus(lambda e: n * (e.slots.get(e.host, 0) // c), f"{n} GPU(s) per task", self._gpu_model(v))

    def _sbatch_cpus_per_gpu(self, v):
        c = int(v)
        return self.all_elements(lambda e: (e.gpus > 0 and e.slots.get(e.host, 0) >= c * e.gpus,
                                            f"{e.slots} CPUs for {e.gpus} GPUs"), f"{c} CPUs per GPU")

    def _sbatch_ntasks_per_gpu(self, v):
        k = int(v)
        return self.all_elements(lambda e: (e.gpus > 0 and e.env.get("SLURM_NTASKS") == str(k * e.gpus),
                                            f"SLURM_NTASKS={e.env.get('SLURM_NTASKS')} for {e.gpus} GPUs"),
                                 f"{k} task(s) per GPU")

    def _sbatch_array(self, v):
        indices, limit = slurm_array(v)
        return self._array(indices, limit)

    def _sbatch_exclusive(self, v):
        return self._exclusive_check()

    def _sbatch_constraint(self, v):
        if not self.site.features_configured:
            return False, "checked", "this XCE took no host features from xce.toml"
        return self._hosts_ok(lambda h: slurm_constraint(v, self.site.features.get(h, set())),
                              f"hosts with {v}")

    def _sbatch_nodelist(self, v):
        want = {h.strip() for h in v.split(",")}
        return self.all_elements(lambda e: (want <= set(e.hosts), f"hosts {e.hosts}"), f"on {sorted(want)}")

    def _sbatch_exclude(self, v):
        no = {h.strip() for h in v.split(",")}
        return self._hosts_ok(lambda h: h not in no, f"not on {sorted(no)}")

    def _sbatch_chdir(self, v):
        want = os.path.normpath(os.path.join(self.run.cwd, v))
        return self.all_elements(lambda e: ((e.probe or {}).get("pwd") == want, (e.probe or {}).get("pwd")),
                                 f"working directory {want}")

    def _sbatch_export(self, v):
        words = [w.strip() for w in v.split(",")]
        if words[0].upper() == "NONE":
            return self.all_elements(lambda e: ("CORPUS_EXPORTED" not in e.env and e.env.get("SLURM_JOB_ID"),
                                                "the submitter's variable reached the job"),
                                     "none of the submitter's variables, Slurm's own set")
        if words[0].upper() == "ALL":
            return self.all_elements(lambda e: (e.env.get("CORPUS_EXPORTED") == "yes",
                                                "the submitter's variable did not reach the job"),
                                     "the submitter's environment")
        names = [w.partition("=")[0] for w in words if w.upper() != "ALL"]
        return self.all_elements(lambda e: (all(n in e.env for n in names), "missing"), f"variables {names}")

    def _sbatch_get_user_env(self, v):
        return self.all_elements(lambda e: (e.env.get("USER") == self.site.user and
                                            e.env.get("HOME") == self.site.home,
                                            f"USER={e.env.get('USER')} HOME={e.env.get('HOME')}"),
                                 "the user's login environment")

    def _sbatch_nice(self, v):
        return self.all_elements(lambda e: ((e.rec.get("priority") or 0) < 0, f"priority {e.rec.get('priority')}"),
                                 "a lower priority")

    def _sbatch_signal(self, v):
        # man sbatch, --signal=[{R|B}:]<sig_num>[@sig_time]: sig_time defaults to 60 seconds; the
        # job's record keeps the signal by name (options.warn_signal) and the time (options.warn_time)
        where, colon, rest = v.partition(":")
        sig, _, at = (rest if colon else v).partition("@")
        name = sig.strip().upper()
        name = name if name.startswith("SIG") or name.isdigit() else "SIG" + name
        want = (name, int(at) if at.strip() else 60)

        def test(e):
            o = e.rec.get("options") or {}
            got = (str(o.get("warn_signal") or ""), o.get("warn_time"))
            return got == want or (name.isdigit() and got[1] == want[1]), f"warning {got}"
        return self.all_elements(test, f"signal {want[0]} {want[1]} s before the limit")

    def _sbatch_open_mode(self, v):
        # the job's record keeps open_mode only where it is not the API's default, append
        return self.all_elements(lambda e: (((e.rec.get("options") or {}).get("open_mode") or "append") == v,
                                            f"open_mode {(e.rec.get('options') or {}).get('open_mode')}"),
                                 f"output opened in {v} mode")

    def _sbatch_requeue(self, v):
        return self.all_elements(lambda e: (e.rec.get("rerunnable") is True, "not rerunnable"), "rerunnable")

    def _sbatch_no_requeue(self, v):
        return self.all_elements(lambda e: (e.rec.get("rerunnable") is False, "rerunnable"), "not rerunnable")

    # LSF ------------------------------------------------------------------------------------
    def _bsub_J(self, v):
        name, indices, limit = lsf_array(v)
        ok, how, note = self._name(name)
        if indices is None or not ok:
            return ok, how, note
        return self._array(indices, limit)

    def _bsub_q(self, v):
        return self._queue([v])

    def _bsub_P(self, v):
        return self._project(v)

    def _bsub_W(self, v):
        return self._runlimit(lsf_time(v))

    def _bsub_o(self, v):
        return self._file(v, "corpus-probe-out", expand_lsf)

    _bsub_oo = _bsub_o

    def _bsub_e(self, v):
        return self._file(v, "corpus-probe-err", expand_lsf)

    _bsub_eo = _bsub_e

    def _bsub_n(self, v):
        lo, _, hi = v.partition(",")
        lo_n, hi_n = int(lo), int(hi or lo)
        return self.all_elements(lambda e: (lo_n <= sum(e.slots.values()) <= hi_n, f"slots {e.slots}"),
                                 f"{v} slots")

    def _bsub_nnodes(self, v):
        ok, how, note = self.all_elements(lambda e: (len(e.hosts) == int(v), f"hosts {e.hosts}"), f"{v} whole node(s)")
        if not ok:
            return ok, how, note
        return self._exclusive_check()

    def _bsub_x(self, v):
        return self._exclusive_check()

    def _bsub_r(self, v):
        return self._sbatch_requeue(v)

    def _bsub_M(self, v):
        want = lsf_mem(v)
        return self._memory(lambda e: want, f"memory limit {want >> 20} MiB")

    def _bsub_cwd(self, v):
        return self._sbatch_chdir(v)

    def _bsub_m(self, v):
        allowed = set(v.split())
        return self._hosts_ok(lambda h: h in allowed, f"on {sorted(allowed)}")

    def _bsub_gpu(self, v):
        num, per_task, model = 1, False, None
        for item in v.split(":"):
            key, _, value = item.strip().partition("=")
            if key == "num":
                count, _, unit = value.partition("/")
                num, per_task = int(count), unit == "task"
            elif key == "gmodel":
                model = value.partition("-")[0]
        return self._gpus(lambda e: num * (e.slots.get(e.host, 0) if per_task else 1),
                          f"{num} GPU(s) {'a task' if per_task else 'a host'}", model)

    def _bsub_R(self, v):
        sections = resreq_sections(v)
        results = []
        for body in sections.get("span", []):
            key, _, value = body.partition("=")
            if key.strip() == "hosts" and value.strip() == "1":
                results.append(self.all_elements(lambda e: (len(e.hosts) == 1, f"hosts {e.hosts}"), "one host"))
            elif key.strip() == "ptile":
                p = int(value)
                results.append(self.all_elements(
                    lambda e: (all(n <= p for n in e.slots.values()) and
                               len(e.hosts) == math.ceil(sum(e.slots.values()) / p), f"slots {e.slots}"),
                    f"{p} slots a host"))
        for body in sections.get("rusage", []):
            gpus = re.search(r"ngpus(?:_excl_[ps]|_shared)?\s*=\s*(\d+)", body)
            if gpus:
                n = int(gpus.group(1))
                results.append(self._gpus(lambda e: n, f"{n} GPU(s)"))
            else:
                ok, _, note = self.all_elements(lambda e: ("rusage" in (e.rec.get("request") or ""),
                                                           f"request {e.rec.get('request')!r}"), "reserved")
                results.append((ok, "kept", note))
        for body in sections.get("select", []):
            if not self.site.features_configured and re.search(r"[A-Za-z]", re.sub(
                    r"\b(" + "|".join(_NUMERIC) + r"|hname|type|any)\b", "", body)):
                results.append((False, "checked", "this XCE took no host features or models from xce.toml"))
                continue
            results.append(self._hosts_ok(lambda h: lsf_select(
                body, h, self.site.features.get(h, set()), self.site.models.get(h), self.site.host_mem >> 20),
                f"hosts where {body}"))
        if not results:
            return self.kept(Directive("bsub", 0, "-R", v, v))
        bad = [r for r in results if not r[0]]
        how = "checked" if any(r[1] == "checked" for r in results) else "kept"
        return (not bad, how, "; ".join(r[2] for r in (bad or results)))


def _names(message: str, d: Directive, repeated: bool = False) -> bool:
    """Whether a refusal names the directive: its option as written or by its full name (a word of the
    message, not part of another word) unless the script gives that option more than once, or its
    value (as a word, or a word of it in quotes: unknown name "avx512")."""
    def word(text: str) -> bool:
        return re.search(r"(?<![\w-])" + re.escape(text) + r"(?![\w-])", message) is not None

    if not repeated and any(word(name) for name in {d.text.split()[0].split("=")[0], d.option}):
        return True
    value = (d.value or "").strip()
    if len(value) >= 3 and not value.isdigit() and word(value):
        return True
    return any(f'"{w}"' in message or f"'{w}'" in message for w in re.findall(r"[\w.:-]{3,}", value))


def _first_line(message: str) -> str:
    lines = [line for line in message.strip().splitlines() if line.strip()]
    return lines[0][:200] if lines else "(no message)"
