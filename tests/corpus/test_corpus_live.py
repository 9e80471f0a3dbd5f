"""Real job scripts, collected from public repositories (``jobscripts/MANIFEST.json`` says where each
comes from), submitted through ``sbatch`` and ``bsub`` as an ordinary user of a live multi-user
cluster, each checked for what its directives asked: tasks, CPUs per task, hosts, the memory limit
of the job's control group, the run limit, output and error files, arrays, exclusivity, node
features, GPUs (fake devices), and the options a test cluster cannot observe kept with the job.

How the scripts run: each file holds the script's directive block as its authors wrote it; the test
applies the scale-downs the manifest lists, then appends one line, the path of a probe that records
what the job got from inside it (environment, working directory, memory limit of its control group).
The bodies of the real scripts call software that is not installed here and are not part of the
corpus (see the manifest's ``about``).

The share of directives honoured must be at least 95 %; every directive that is not is printed with
the program's message, and a refusal must name the directive it refuses.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from corpus_checks import UNREADABLE, Checker, Element, Run, Site, Verdict, resreq_sections
from corpus_directives import Directive, Unreadable, read

from xce.cluster import LocalCluster
from xce.testing import fakegpu
from xce.testing.asuser import AsUser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from sec_harness import reachable_dir, unix_users  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CORPUS = Path(__file__).parent / "jobscripts"

# == The test cluster: the one place to adjust ===================================================
#: Hosts and job slots of each; the manifest's scale-downs are written for these.
HOSTS, SLOTS = 3, 40
HOST_PREFIX = "cx"
#: Fake GPUs on every host (the worker's NVML provider reads a stand-in pynvml: xce.testing.fakegpu).
GPUS = 4
#: LSF sites set this in lsf.conf; most set MB, as the corpus's authors assume.
LSF_UNIT_FOR_LIMITS = "MB"
#: How long the whole corpus may take to run once submitted, and how long jobs that only pend, with
#: nothing running and nothing changing, are given before they are reported as never started.
RUN_TIMEOUT_S = 120.0
PEND_GRACE_S = 10.0
#: The share of directives that must be honoured.
HONOURED = 0.95


def host(i: int) -> str:
    return f"{HOST_PREFIX}-w{i}"


def site_toml(queues: set[str], projects: set[str], features: set[str], models: list[str],
              gpu_models: list[str]) -> dict:
    """xce.toml of the test site, as plain data: a queue for every partition or queue the corpus names,
    a project for every account, host features, models and GPU models (host 1 has none of them, so a
    job that asks for one must avoid it). The ``hosts`` keys are those of the node-features work
    (``[hosts.NAME] features, model, gpu_model``); :func:`accepted_config` drops what this XCE's
    schema does not know."""
    hosts: dict[str, dict] = {}
    for i in range(2, HOSTS + 1):
        hosts[host(i)] = {"features": sorted(f for f in features if re.fullmatch(r"\w+", f))}
    for n, model in enumerate(models):
        hosts[host(2 + n % (HOSTS - 1))]["model"] = model
    for n, model in enumerate(gpu_models):
        hosts[host(2 + n % (HOSTS - 1))]["gpu_model"] = model
    return {
        "default_queue": "normal",
        "queues": {q: {} for q in sorted(queues | {"normal"})},
        "projects": {p: {} for p in sorted(projects | {"default"})},
        "hosts": hosts,
    }
# ================================================================================================


def accepted_config(data: dict) -> tuple[dict, list[str]]:
    """``data`` less the keys this XCE's configuration schema refuses, and those keys (so the same test
    runs before and after the features work lands, and says what it had to leave out)."""
    from pydantic import ValidationError

    from xce.config.schema import ClusterConfig

    dropped = []
    data = json.loads(json.dumps(data))
    for _ in range(50):
        try:
            ClusterConfig.model_validate(data)
            return data, dropped
        except ValidationError as exc:
            errors = [e for e in exc.errors() if e["type"] == "extra_forbidden"]
            if not errors:
                raise
            for err in errors:
                node = data
                for part in err["loc"][:-1]:
                    node = node[part]
                node.pop(err["loc"][-1], None)
                dropped.append(".".join(str(p) for p in err["loc"]))
    raise AssertionError("the configuration never validated")


def toml_text(data: dict, prefix: str = "") -> str:
    """A small TOML writer for :func:`site_toml`'s data (strings, numbers, lists of strings, tables)."""
    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return str(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    lines, tables = [], []
    for k, v in data.items():
        key = k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)
        if isinstance(v, dict):
            tables.append((f"{prefix}.{key}" if prefix else key, v))
        else:
            lines.append(f"{key} = {value(v)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for name, table in tables:
        out += f"\n[{name}]\n" + toml_text(table, name)
    return out


PROBE = r"""#!/bin/sh
# What the job got, from inside it (tests/corpus/test_corpus_live.py).
echo corpus-probe-out
echo corpus-probe-err >&2
id=${XCE_JOBID:-${SLURM_JOB_ID:-${LSB_JOBID:-unknown$$}}}
out=@DIR@/$id
env -0 > "$out.env"
limit() {
  p=$2
  while :; do
    if [ -r "$1$p/$3" ]; then cat "$1$p/$3"; return; fi
    case $p in */*/*) p=/${p#/*/} ;; *) return ;; esac
  done
}
v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
v2=$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
lim=
[ -n "$v1" ] && lim=$(limit /sys/fs/cgroup/memory "$v1" memory.limit_in_bytes)
[ -z "$lim" ] && [ -n "$v2" ] && lim=$(limit /sys/fs/cgroup "$v2" memory.max)
printf 'pwd=%s\nuid=%s\nmemlimit=%s\n' "$(pwd)" "$(id -u)" "$lim" > "$out.info"
"""


def load_corpus() -> list[dict]:
    return json.loads((CORPUS / "MANIFEST.json").read_text())["scripts"]


def corpus_requests(scripts: list[dict]) -> tuple[set, set, set, list, list]:
    """The queues, projects, host features, models and GPU models the corpus names (a site where its
    scripts ran had them)."""
    queues, projects, features, models, gpu_models = set(), set(), set(), [], []
    for s in scripts:
        try:
            ds = read(s["kind"], (CORPUS / s["kind"] / s["name"]).read_text())
        except Unreadable:
            continue
        for d in ds:
            v = d.value or ""
            if d.option in ("--partition", "-q"):
                queues.update(p.strip() for p in v.split(","))
            elif d.option in ("--account", "-P"):
                projects.add(v)
            elif d.option in ("--gres", "--gpus", "--gpus-per-node", "--gpus-per-task", "-gpu"):
                for m in re.finditer(r"(?:gpu:|^|gmodel=)([A-Za-z][\w.-]*):\d+|gmodel=([\w.-]+)", v):
                    name = m.group(1) or m.group(2)
                    if name and name != "gpu" and name not in gpu_models:
                        gpu_models.append(name)
            elif d.option == "--constraint":
                features.update(t for t in re.findall(r"[A-Za-z_][A-Za-z0-9_.\-]*", v))
            elif d.option == "-R":
                for body in resreq_sections(v).get("select", []):
                    for m in re.finditer(r"\bmodel\s*==?\s*([A-Za-z0-9_.\-]+)", body):
                        if m.group(1) not in models:
                            models.append(m.group(1))
                    stripped = re.sub(r"\b\w+\s*(==|!=|>=|<=|=|>|<)\s*[\w.\-]+", " ", body)
                    features.update(t for t in re.findall(r"[A-Za-z_][A-Za-z0-9_.\-]*", stripped)
                                    if t not in ("defined", "any"))
    return queues, projects, features, models, gpu_models


def submitted_text(script: dict, cwd: Path, probe: Path) -> str:
    text = (CORPUS / script["kind"] / script["name"]).read_text()
    for sub in script["substitutions"]:
        new = sub["to"].format(cwd=cwd, host1=host(1), host2=host(2), host3=host(3))
        assert sub["from"] in text, (script["name"], sub["from"])
        text = text.replace(sub["from"], new)
    return text + f"{probe}\n"


def output_dirs(directives, cwd: Path) -> list[Path]:
    """The directories the scripts' output and error paths need: their authors made them before
    submitting (sbatch and bsub do not create them)."""
    out = []
    for d in directives:
        if d.option in ("--output", "--error", "-o", "-oo", "-e", "-eo") and d.value and "/" in d.value:
            out.append(cwd / os.path.dirname(d.value))
        if d.option in ("-cwd", "--chdir") and d.value:
            out.append(cwd / d.value)
    return out


def jobid_of(kind: str, stdout: str) -> int | None:
    m = re.search(r"Submitted batch job (\d+)" if kind == "sbatch" else r"Job <(\d+)> is submitted", stdout)
    return int(m.group(1)) if m else None


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    scripts = load_corpus()
    queues, projects, features, models, gpu_models = corpus_requests(scripts)
    with reachable_dir() as base, unix_users(1, base) as (user,):
        gpu_env = fakegpu.environment(base / "fake-nvml", GPUS)
        config, dropped = accepted_config(site_toml(queues, projects, features, models, gpu_models))
        cfg = base / "xce.toml"
        cfg.write_text(toml_text(config))
        saved = {k: os.environ.get(k) for k in gpu_env}
        os.environ.update(gpu_env)  # the workers' environment: LocalCluster starts them with this one
        cluster = LocalCluster(base / "state", HOSTS, SLOTS, config=cfg, run_as_self=False, host_prefix=HOST_PREFIX,
                               round_interval=0.05, report_interval=0.5)
        try:
            cluster.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        helpers: list[AsUser] = []
        try:
            probe_dir = base / "probes"
            probe_dir.mkdir()
            os.chown(probe_dir, user.uid, user.gid)
            probe = base / "probe.sh"
            probe.write_text(PROBE.replace("@DIR@", str(probe_dir)))
            probe.chmod(0o755)
            token = cluster.request("POST", "/v1/admin/tokens", {"name": user.name})["token"]
            env = {"HOME": str(user.home), "USER": user.name, "LOGNAME": user.name, "SHELL": "/bin/sh",
                   "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "XCE_URL": cluster.url,
                   "XCE_TOKEN": token, "LSF_UNIT_FOR_LIMITS": LSF_UNIT_FOR_LIMITS, "CORPUS_EXPORTED": "yes"}
            helpers = [AsUser(user.uid, user.gid, user.name) for _ in range(2)]
            truth = {"features": {h: set(v.get("features", [])) for h, v in config.get("hosts", {}).items()},
                     "models": {h: v["model"] for h, v in config.get("hosts", {}).items() if "model" in v},
                     "gpu_models": {h: v["gpu_model"] for h, v in config.get("hosts", {}).items() if "gpu_model" in v}}
            host_mem = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
            yield {"cluster": cluster, "user": user, "env": env, "helpers": helpers, "probe": probe,
                   "probe_dir": probe_dir, "base": base, "scripts": scripts, "dropped": dropped,
                   "site": Site(user.name, str(user.home), tuple(host(i) for i in range(1, HOSTS + 1)),
                                truth["features"], truth["models"], truth["gpu_models"], GPUS, host_mem,
                                features_configured=not any(k.endswith((".features", ".model")) for k in dropped),
                                gpu_models_configured=not any(k.endswith(".gpu_model") for k in dropped))}
        finally:
            for h in helpers:
                h.close()
            cluster.stop()
            shutil.rmtree(base / "u", ignore_errors=True)


def submit_all(site) -> dict[str, Run]:
    user, base = site["user"], site["base"]
    runs: dict[str, Run] = {}
    jobs: dict[str, tuple[Run, int | None]] = {}
    (base / "u").mkdir(mode=0o755)

    def one(i_script):
        i, script = i_script
        cwd = base / "u" / script["name"]
        cwd.mkdir(mode=0o755)
        text = submitted_text(script, cwd, site["probe"])
        try:
            directives = read(script["kind"], text)
        except Unreadable as exc:  # the real program refuses the script: so must XCE
            directives = [Directive(script["kind"], 0, UNREADABLE, None, str(exc))]
        for d in [cwd, *output_dirs(directives, cwd)]:
            d.mkdir(parents=True, exist_ok=True)
            os.chown(d, user.uid, user.gid)
        path = cwd / "job.sh"
        path.write_text(text)
        os.chown(path, user.uid, user.gid)
        helper = site["helpers"][i % len(site["helpers"])]
        if script["kind"] == "sbatch":
            r = helper.run(["sbatch", "job.sh"], cwd=str(cwd), env=site["env"])
        else:
            r = helper.run(["bsub"], cwd=str(cwd), env=site["env"], stdin=text)
        jobid = jobid_of(script["kind"], r.stdout) if r.returncode == 0 else None
        message = (r.stdout + r.stderr).strip()
        run = Run(script["name"], script["kind"], directives, jobid is not None, message, str(cwd))
        return script["name"], run, jobid

    with ThreadPoolExecutor(len(site["helpers"])) as pool:
        for name, run, jobid in pool.map(one, enumerate(site["scripts"])):
            runs[name] = run
            jobs[name] = (run, jobid)
    return runs, {name: jid for name, (_, jid) in jobs.items()}


def wait_and_gather(site, runs: dict[str, Run], jobids: dict[str, int | None]) -> None:
    cluster = site["cluster"]
    wanted = {j for j in jobids.values() if j is not None}
    deadline = time.monotonic() + RUN_TIMEOUT_S
    last, still = None, time.monotonic()
    while True:
        listing = cluster.request("GET", "/v1/jobs", user="all", all="true")["jobs"]
        mine = [j for j in listing if j["jobid"] in wanted or j.get("array_id") in wanted]
        states = sorted((j["jobid"], j["state"]) for j in mine)
        if states != last:
            last, still = states, time.monotonic()
        if all(j["state"] in ("DONE", "EXIT") for j in mine) or time.monotonic() > deadline:
            break
        # Nothing runs and nothing moved for a while: what still pends waits for a host that never comes.
        if not any(j["state"] == "RUN" for j in mine) and time.monotonic() - still > PEND_GRACE_S:
            break
        time.sleep(0.5)
    for name, jid in jobids.items():
        run = runs[name]
        run.everyone = listing
        if jid is None:
            continue
        members = [j for j in listing if j.get("array_id") == jid and j.get("array_index") is not None]
        members = members or [j for j in listing if j["jobid"] == jid]
        for j in sorted(members, key=lambda j: j["jobid"]):
            rec = cluster.request("GET", f"/v1/jobs/{j['jobid']}")
            rec = {**j, **rec}
            run.elements.append(Element(rec, read_probe(site["probe_dir"], j["jobid"])))


def read_probe(directory: Path, jobid: int) -> dict | None:
    env_file, info_file = directory / f"{jobid}.env", directory / f"{jobid}.info"
    if not env_file.exists():
        return None
    env = dict(item.split("=", 1) for item in env_file.read_text(errors="replace").split("\0") if "=" in item)
    info = {}
    if info_file.exists():
        info = dict(line.split("=", 1) for line in info_file.read_text().splitlines() if "=" in line)
    return {"env": env, **info}


def report(verdicts: list[Verdict], runs: dict[str, Run], dropped: list[str]) -> str:
    ok = sum(v.ok for v in verdicts)
    lines = [f"{ok} of {len(verdicts)} directives honoured ({ok / max(1, len(verdicts)):.1%}) in {len(runs)} scripts "
             f"({sum(r.kind == 'sbatch' for r in runs.values())} sbatch, {sum(r.kind == 'bsub' for r in runs.values())} "
             f"bsub); {sum(r.accepted for r in runs.values())} accepted, "
             f"{sum(bool(r.elements) and all(e.rec.get('state') == 'DONE' for e in r.elements) for r in runs.values())}"
             " ran to the end"]
    for how in ("checked", "kept", "refused", "not run"):
        group = [v for v in verdicts if v.how == how]
        if group:
            lines.append(f"  {how}: {sum(v.ok for v in group)} of {len(group)} honoured")
    if dropped:
        lines.append(f"  configuration this XCE does not take (left out): {', '.join(dropped)}")
    if os.environ.get("CORPUS_VERBOSE"):
        lines += ["", "Every verdict:"] + [f"  {'ok ' if v.ok else 'NO '} {v.script:<44} {v.directive.text[:40]:<40} "
                                           f"{v.how:<8} {v.note[:150]}" for v in verdicts]
    lines.append("")
    lines.append("Directives not honoured:")
    width = max((len(v.script) for v in verdicts if not v.ok), default=10)
    for v in verdicts:
        if not v.ok:
            lines.append(f"  {v.script:<{width}}  {v.directive.text[:48]:<48}  {v.how:<8}  {v.note}")
    return "\n".join(lines)


def test_the_corpus_gets_what_its_directives_ask(site):
    assert len(site["scripts"]) >= 60, "the corpus must hold at least 60 scripts"
    t0 = time.monotonic()
    runs, jobids = submit_all(site)
    t1 = time.monotonic()
    wait_and_gather(site, runs, jobids)
    verdicts = [v for run in runs.values() for v in Checker(run, site["site"]).verdicts()]
    text = report(verdicts, runs, site["dropped"])
    print(f"\n{text}\n(submitted in {t1 - t0:.0f} s, all done {time.monotonic() - t0:.0f} s after the first)")
    # A script refused at submission: its message names the directive it refuses, in the program's words.
    silent = [f"  {r.name}: {r.message[:200]!r}" for r in runs.values()
              if not r.accepted and not any(v.how == "refused" and v.ok or v.how == "refused" and
                                            not v.note.startswith("refused without") for v in verdicts
                                            if v.script == r.name)]
    share = sum(v.ok for v in verdicts) / len(verdicts)
    problems = []
    if silent:
        problems.append("refusals that name no directive of the script:\n" + "\n".join(silent))
    if share < HONOURED:
        problems.append(f"only {share:.1%} of the directives honoured (at least {HONOURED:.0%} expected)")
    assert not problems, "\n".join(problems) + "\n\n" + text


def test_the_manifest_names_every_script_and_where_it_comes_from():
    scripts = load_corpus()
    names = {(s["kind"], s["name"]) for s in scripts}
    on_disk = {(p.parent.name, p.name) for p in CORPUS.glob("*/*") if p.parent.name in ("sbatch", "bsub")}
    assert names == on_disk
    for s in scripts:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", s["repo"]) and s["path"] and re.fullmatch(r"[0-9a-f]{40}", s["commit"]), s
        text = (CORPUS / s["kind"] / s["name"]).read_text()
        assert read(s["kind"], text), f"{s['name']}: no directive read"
        for sub in s["substitutions"]:
            assert sub["from"] in text and sub["why"], (s["name"], sub)
    assert sum(s["kind"] == "sbatch" for s in scripts) >= 40 and sum(s["kind"] == "bsub" for s in scripts) >= 20


def test_the_reader_follows_sbatch_and_bsub():
    # sbatch stops at the first command; a misspelt or doubled prefix is a comment; prefixes abbreviate.
    text = "#!/bin/sh\n#SBATCH --ntasks-per-n=2 -c4\n##SBATCH --mem=1G\n#SBTACH -N 3\n--mem=5G\n#SBATCH -N 2\n"
    assert [(d.option, d.value) for d in read("sbatch", text)] == [("--ntasks-per-node", "2"), ("--cpus-per-task", "4")]
    # bsub: several options on a line, values attached, the longest name first.
    text = '#BSUB -W 15 -n 1,1\n#BSUB -nnodes 2 -M1000 -oo out.%J -R "span[ptile=4]" # a comment\n'
    assert [(d.option, d.value) for d in read("bsub", text)] == [
        ("-W", "15"), ("-n", "1,1"), ("-nnodes", "2"), ("-M", "1000"), ("-oo", "out.%J"), ("-R", "span[ptile=4]")]
