"""The cluster configuration file (``xce.toml``) as a pydantic schema.

One schema serves the controller, the scheduler, the simulator and ``xce config check``;
the configuration reference in ``docs/`` is generated from it, so the two cannot drift.
Unknown keys are errors (``extra="forbid"``): a typo in a policy file must never be
silently ignored.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: A Literal rather than a validator, so that the generated reference lists the choices.
PreemptSignal = Literal["SIGSTOP", "SIGTSTP"]
PREEMPT_SIGNALS: tuple[str, ...] = get_args(PreemptSignal)

#: job-resources.md's naming rule: ``domain.tld/name``; the domain needs a dot.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_RESOURCE_NAME = re.compile(rf"^{_LABEL}(?:\.{_LABEL})+/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
RESERVED_RESOURCE_DOMAIN = "xce.io"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SchedulerSettings(_Strict):
    """How the scheduler runs its rounds."""

    job_pick_plugin: str = Field(
        "builtin_fcfs", description="Global job picker plugin name; must be a registered picker."
    )
    round_interval_s: float = Field(
        0.2, gt=0, description="Least time between two scheduling rounds when events keep arriving."
    )
    max_round_interval_s: float = Field(
        5.0, gt=0, description="A round runs at least this often even without new events."
    )
    record_snapshot_interval: int = Field(
        10000, ge=0, description="While recording, append a fresh snapshot every N events (0 = only the first)."
    )
    record_dir: str | None = Field(
        None, description="Directory replay recordings are written to, on the scheduler's host; a requested file "
        "must lie inside it (default: `recordings/` in the state directory)."
    )
    record: Literal["off", "rotate"] = Field(
        "off", description="`rotate`: always record, into `rotate-*.jsonl` files of the record directory, a new file "
        "by size or age and old ones deleted, so a window of history is there for `xce scheduler --sim` and "
        "`xce whatif`. `off`: only `xceadmin scheduler record start` records."
    )
    record_rotate_bytes: int = Field(64 << 20, ge=1 << 16, description="With `record = \"rotate\"`: start a new file "
                                     "when the current one reaches this size (bytes).")
    record_rotate_s: float = Field(3600.0, gt=0, description="With `record = \"rotate\"`: start a new file when the "
                                   "current one is this old (seconds).")
    record_keep_s: float = Field(8 * 86400.0, gt=0, description="With `record = \"rotate\"`: delete files older than "
                                 "this (seconds; default 8 days).")
    record_keep_bytes: int = Field(1 << 30, ge=1 << 16, description="With `record = \"rotate\"`: delete the oldest "
                                   "files while all of them together are larger than this (bytes).")


def _absolute(value: str | None) -> str | None:
    if value is not None and not value.startswith("/"):
        raise ValueError("expected an absolute path to an executable")
    return value


class QueueHooks(_Strict):
    """Executables the controller runs on this queue's job events, like LSF's pre/post-exec and Slurm's
    PrologSlurmctld/EpilogSlurmctld. Each gets the event as JSON on stdin (and `XCE_*` variables), runs
    on the controller's host under `[hooks] timeout_s`, and never holds anything up."""

    start: str | None = Field(None, description="Absolute path; run when a job of the queue is dispatched.")
    stop: str | None = Field(None, description="Absolute path; run when a job that ran ends (HOOK_DETAIL_JOB_STOP: "
                             "exit status, signal, run time, usage, end reason).")
    preempt: str | None = Field(None, description="Absolute path; run when a job of the queue is suspended by "
                                "preemption (HOOK_DETAIL_JOB_STOP, end reason `preempted`).")
    resume: str | None = Field(None, description="Absolute path; run when a suspended job of the queue resumes.")

    @field_validator("start", "stop", "preempt", "resume")
    @classmethod
    def _paths(cls, value: str | None) -> str | None:
        return _absolute(value)


class HookSettings(_Strict):
    """How the controller runs site hooks (queues' executables and `xce.hooks` entry points)."""

    timeout_s: float = Field(30.0, gt=0, description="A hook still running after this long is killed (an "
                             "executable, with its process group) or abandoned and logged (a Python hook).")
    workers: int = Field(2, ge=1, le=64, description="Hooks run at once; more events wait in a bounded queue.")


class QueueConfig(_Strict):
    """A submission channel with its scheduling policy (LSF's lsb.queues entry)."""

    priority: int = Field(0, description="Higher priority queues are considered first.")
    status: Literal["open", "closed"] = Field("open", description="A closed queue takes no new submissions and dispatches nothing.")
    active: bool = Field(True, description="An inactive queue accepts submissions but dispatches nothing.")
    max_running: int | None = Field(None, ge=1, description="MAX_RUNNING: most jobs of this queue running at once.")
    max_running_per_user: int | None = Field(None, ge=1, description="Most running jobs per user in this queue.")
    project_name: str | None = Field(
        None, description="The project that owns this queue's resources; must be a project defined in this file."
    )
    job_pick_plugin: str | None = Field(
        None, description="Per-queue picker override (default: the global picker); must be a registered picker."
    )
    preemptible_queues: list[str] = Field(
        default_factory=list,
        description="Queues whose jobs this queue may suspend; each must be a queue defined in this file.",
    )
    preemptible: bool = Field(True, description="Whether other queues may suspend this queue's jobs.")
    preempt_policy: str = Field(
        "lowest_priority_first", description="Victim selection plugin; must be a registered preemption policy."
    )
    preempt_signal: PreemptSignal = Field("SIGSTOP", description="Signal that suspends a victim.")
    run_limit: int | None = Field(
        None, ge=1, description="RUNLIMIT: run limit in minutes of a job submitted without `-W`/`--time` "
        "(default: `max_run_limit`, or none). The worker ends a job at its limit (SIGTERM, SIGKILL after a grace).")
    max_run_limit: int | None = Field(
        None, ge=1, description="The longest run limit in minutes a job of this queue may ask for; a longer "
        "`-W` is refused at submission. Backfilling counts a job without a limit as running this long.")
    process_limit: int | None = Field(
        None, ge=1, description="PROCESSLIMIT: most processes and threads a job of this queue may have at once on "
        "each of its hosts (the control group's pids limit; a worker's `--pids-max` caps it further). A fork "
        "beyond it fails in the job.")
    backfill_depth: int | None = Field(
        None, ge=1, description="Backfilling pickers: how many pending jobs one round tries (default: all).")
    reservations: int = Field(
        1, ge=0, description="Backfilling pickers: how many blocked jobs get a reservation (1 = EASY backfilling; "
        "more approaches conservative backfilling).")
    hooks: QueueHooks = Field(default_factory=QueueHooks, description="Executables run on this queue's job events.")
    fairshare_by: Literal["user", "project"] = Field(
        "user", description="The `fairshare` picker: compare usage per user or per project.")
    shares: dict[str, int] = Field(
        default_factory=dict, description="The `fairshare` picker: shares per user (or project); a name not listed "
        "has 1. Usage is kept in proportion to the shares of those with pending work.")
    fairshare_half_life: int = Field(
        7 * 24 * 3600, ge=1, description="The `fairshare` picker: seconds after which past usage counts half.")
    description: str = Field("", description="Free text telling users what the queue is for.")

    @model_validator(mode="after")
    def _limits(self) -> "QueueConfig":
        if self.run_limit is not None and self.max_run_limit is not None and self.run_limit > self.max_run_limit:
            raise ValueError(f"run_limit ({self.run_limit} min) is longer than max_run_limit "
                             f"({self.max_run_limit} min)")
        return self


class ProjectConfig(_Strict):
    """Who owns resources and gets charged."""

    priority: int = Field(0, description="Inter-project ordering for project-aware pickers; builtin_fcfs ignores it.")
    description: str = Field("", description="Free text for people reading the configuration.")


class SharedResourceConfig(_Strict):
    """A cluster-wide pool such as software licenses, counted once, not per host."""

    total: int = Field(..., ge=0, description="How many units the pool holds: a whole number, or text in the quantity "
                       "grammar (`\"4K\"` = 4096; K, M, G, T, P are powers of 1024).")
    description: str = Field("", description="Free text for people reading the configuration.")

    @field_validator("total", mode="before")
    @classmethod
    def _quantity_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            from xce.core.quantity import parse_quantity

            return parse_quantity("", value)
        return value


class HostTraits(_Strict):
    """What describes a host rather than measures it: its features, model and type (a host group's
    settings give them to every member)."""

    features: list[str] = Field(
        default_factory=list, description="Node features (Slurm's `Features=`, LSF's boolean resources): words "
        "`sbatch --constraint` and `select[NAME]` match. Added to the worker's own (`xce worker --feature`) and "
        "to those of the host's groups. Letters, digits and `_`.")
    model: str | None = Field(None, description="The host model (`lshosts` HOST_MODEL, `select[model == X]`); "
                              "wins over the worker's `--model`.")
    type: str | None = Field(None, description="The host type (`lshosts` HOST_TYPE, `select[type == X]`); wins over "
                             "the worker's `--type` and the measured architecture (`X86_64`).")
    gpu_model: str | None = Field(None, description="The model of the host's GPUs, as jobs name it (`sbatch "
                                  "--gres=gpu:MODEL:N`, `bsub -gpu gmodel=MODEL`); wins over NVML's device name and "
                                  "the worker's `--fake-gpus MODEL:N`.")

    @field_validator("features")
    @classmethod
    def _feature_names(cls, v: list[str]) -> list[str]:
        from xce.core.features import feature_problem

        problems = [p for p in map(feature_problem, v) if p]
        if problems:
            raise ValueError("; ".join(problems))
        return v

    @field_validator("model", "type", "gpu_model")
    @classmethod
    def _word(cls, v: str | None) -> str | None:
        if v is not None and not _WORD.fullmatch(v):
            raise ValueError(f"{v!r} is not one word: letters, digits, '.', '_' or '-', at most 64 characters")
        return v


class HostConfig(HostTraits):
    """Per-host overrides; everything else a worker measures itself."""

    slots: int | None = Field(None, ge=0, description="Slots this host offers instead of its usable CPUs.")


class ControllerSettings(_Strict):
    """How the controller serves its API (read at start; changing them needs a restart)."""

    tls_cert: str | None = Field(None, description="Certificate chain (PEM) to serve HTTPS with; needs `tls_key`.")
    tls_key: str | None = Field(None, description="Private key (PEM) of `tls_cert`.")
    tls_ca: str | None = Field(
        None, description="CA bundle that clients on this host should verify the controller with; written to "
        "`controller.json` for them (clients elsewhere use `--ca-file` or `XCE_CA_FILE`).")
    insecure_http: bool = Field(
        False, description="Serve plain HTTP on an address other than loopback (tokens and job data then cross the "
        "network unencrypted). Without TLS and without this, such a bind is refused.")

    @model_validator(mode="after")
    def _pair(self) -> "ControllerSettings":
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together: set both to serve HTTPS, or neither")
        return self


class AuthSettings(_Strict):
    """How callers prove who they are besides bearer tokens."""

    munge: bool = Field(False, description="Accept MUNGE credentials (`Authorization: MUNGE ...`): the user is the "
                        "credential's uid, mapped to a name on the controller's host.")
    munge_socket: str = Field("/run/munge/munge.socket.2", description="The local munged's socket.")


class PrivacySettings(_Strict):
    """What users may see of each other's jobs (Slurm's `PrivateData=jobs`)."""

    show_all_jobs: bool = Field(
        False, description="Show every user the command, working directory and output paths of everyone's jobs "
        "(never the environment). Admins always see them.")


class AccountingSettings(_Strict):
    """How long finished jobs are kept for `xce acct` (LSF's `lsb.acct`, Slurm's `PurgeJobAfter`)."""

    retention_days: float = Field(
        0, ge=0, description="Delete finished jobs (with their history and accounting records) this many days "
        "after they ended; 0 keeps them forever.")


class MetricsSettings(_Strict):
    """Who may read ``GET /metrics``."""

    public: bool = Field(
        False, description="Serve /metrics without a token (for a Prometheus on a trusted network); otherwise it "
        "needs a token of any role, e.g. the scrape-only one in `tokens/metrics`.")


class JobEnvSettings(_Strict):
    """The variables LSF and Slurm set inside a job, which scripts written for them read."""

    families: list[Literal["lsf", "slurm"]] = Field(
        default_factory=lambda: ["lsf", "slurm"], description="Which families of job variables every job gets beside "
        "XCE's own: `lsf` (LSB_JOBID, LSB_HOSTS, ...), `slurm` (SLURM_JOB_ID, SLURM_JOB_NODELIST, ...); [] for none.")


class MemorySettings(_Strict):
    """Whether a job's memory reservation is also its memory limit (its control group's, on each host).

    Slurm sites confine memory (``ConstrainRAMSpace=yes`` in ``cgroup.conf``): a job gets what its
    ``--mem`` options asked and no more, and one that goes over ends ``OUT_OF_MEMORY``. LSF keeps
    ``rusage[mem]`` a reservation: only ``-M`` is a limit (``LSB_RESOURCE_ENFORCE="memory"`` enforces
    it through the job's cgroup). Each is a switch here, with the default its own sites expect."""

    constrain_ram_space: bool = Field(
        True, description="A memory reservation given as an amount (Slurm's `--mem`, `--mem-per-cpu`, "
        "`--mem-per-gpu`; `xce submit --request mem=`) is also the job's memory limit on each host it runs on: "
        "the amount reserved there (per slot times that host's slots), enforced by its control group (Slurm's "
        "`ConstrainRAMSpace`). Off: a reservation only, as before.")
    enforce_rusage: bool = Field(
        False, description="A `rusage[mem=...]` in a resource requirement (`bsub -R`, `xce submit -R`) is also the "
        "job's memory limit on each host, as `constrain_ram_space` makes Slurm's. LSF never turns `rusage[mem]` "
        "into a limit (only `-M` is one), so an LSF site's default is off.")


class MailSettings(_Strict):
    """Job mail (Slurm's `--mail-type`/`--mail-user`, LSF's `bsub -B`/`-N`/`-u`): off unless a relay or a
    sendmail is named. Sent by the leading controller after the move is committed, at most once."""

    smtp_host: str | None = Field(None, description="The SMTP relay to send through (no TLS, no login: a relay "
                                  "that trusts the controller's host, as Slurm's and LSF's mail programs assume).")
    smtp_port: int = Field(25, ge=1, le=65535, description="The relay's port.")
    sendmail: str | None = Field(None, description="Absolute path of a sendmail-compatible program, run as "
                                 "`sendmail -t -oi` with the message on stdin (Slurm's `MailProg`); instead of "
                                 "`smtp_host`.")
    from_address: str | None = Field(None, description="The From of every message; by default "
                                     "`XCE <xce@FQDN>` with the controller's host name.")
    domain: str | None = Field(None, description="The domain of a job's user when the job named no address "
                               "(Slurm's `MailDomain`): mail goes to `USER@DOMAIN`; unset, to the bare user name.")
    timeout_s: float = Field(10.0, gt=0, description="How long one connection to the relay, or one sendmail run, "
                             "may take before the message is given up (logged).")

    @property
    def enabled(self) -> bool:
        return bool(self.smtp_host or self.sendmail)

    @model_validator(mode="after")
    def _one_way(self) -> "MailSettings":
        if self.smtp_host and self.sendmail:
            raise ValueError("name smtp_host or sendmail, not both")
        if self.sendmail and not self.sendmail.startswith("/"):
            raise ValueError("sendmail must be an absolute path")
        return self


class ClusterConfig(_Strict):
    """The whole ``xce.toml``."""

    cluster_name: str = Field("xce", description="Name shown by the CLI and in logs.")
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings, description="Scheduling round settings.")
    queues: dict[str, QueueConfig] = Field(
        default_factory=lambda: {"normal": QueueConfig()},
        description="Queues by name; a job without -q goes to default_queue.",
    )
    default_queue: str = Field("normal", description="Queue of a job submitted without -q; must be a defined queue.")
    job_dep_last_sub: bool = Field(
        False, description="LSF's `JOB_DEP_LAST_SUB=1`: a dependency naming a job name that several of the user's jobs "
        "carry (`-w 'done(prep)'`) waits for the one submitted last; by default all of them must satisfy it.")
    projects: dict[str, ProjectConfig] = Field(
        default_factory=lambda: {"default": ProjectConfig()}, description="Projects by name."
    )
    shared_resources: dict[str, SharedResourceConfig] = Field(
        default_factory=dict,
        description="Cluster-wide pools by resource name; names are domain-prefixed (`example.com/cfd-license`).",
    )
    resource_names: dict[str, str] = Field(
        default_factory=lambda: {"memory_rss": "mem"},
        description="Worker usage names mapped to scheduler resource names.",
    )
    hosts: dict[str, HostConfig] = Field(default_factory=dict, description="Per-host overrides by host name.")
    host_groups: dict[str, list[str]] = Field(
        default_factory=dict, description="Named sets of hosts (LSF's host groups, Slurm's node lists), by group "
        "name: `gpu = [\"h1\", \"h2\"]`. A job's host list (`xce submit -m`, `-w`, `--exclude`) may name a group "
        "for all its hosts. A group name must not be a host's name; members are host names.")
    host_group_settings: dict[str, HostTraits] = Field(
        default_factory=dict, description="Features, model, type and GPU model given to every host of a "
        "`[host_groups]` group, by group name. A host's own `[hosts.NAME]` value wins over its groups'; features "
        "add up.")
    admins: list[str] = Field(default_factory=lambda: ["root"], description="Users allowed to run `xceadmin`.")
    allow_root_jobs: bool = Field(
        False, description="Whether a multi-user cluster accepts root's jobs, to run as root on workers started with "
        "--allow-root-jobs (`xce up --multi-user` gives its workers that flag); the admin service token's jobs (what "
        "root's commands on a controller host fall back to) are then root's too. Off: root's submissions (its token, "
        "MUNGE uid 0) are refused, as LSF refuses root's bsub unless LSF_ROOT_USER=Y.")
    controller: ControllerSettings = Field(default_factory=ControllerSettings, description="Serving the API: TLS.")
    auth: AuthSettings = Field(default_factory=AuthSettings, description="Identity: MUNGE.")
    privacy: PrivacySettings = Field(default_factory=PrivacySettings, description="Other users' jobs.")
    metrics: MetricsSettings = Field(default_factory=MetricsSettings, description="Access to the Prometheus endpoint.")
    accounting: AccountingSettings = Field(default_factory=AccountingSettings,
                                           description="Finished jobs kept for `xce acct`: retention.")
    hooks: HookSettings = Field(default_factory=HookSettings, description="Site hooks on job events: time limit.")
    job_env: JobEnvSettings = Field(default_factory=JobEnvSettings,
                                    description="LSF's and Slurm's variables inside jobs.")
    memory: MemorySettings = Field(default_factory=MemorySettings,
                                   description="Memory reservations as limits: Slurm's ConstrainRAMSpace, LSF's rusage.")
    mail: MailSettings = Field(default_factory=MailSettings,
                               description="Job mail: an SMTP relay or sendmail, the sender, the users' domain.")

    @model_validator(mode="after")
    def _cross_references(self) -> "ClusterConfig":
        problems = reference_errors(self.model_dump())
        if problems:
            raise ValueError("; ".join(f"{format_path(path)}: {msg}" for path, msg in problems))
        return self


def format_path(path: tuple[str | int, ...]) -> str:
    """Spell a key path the way it would be written in TOML, so an operator can search the file for it.

    Keys that are not bare TOML keys (``example.com/cfd-license``) are quoted; list indexes are ``[i]``.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        key = part if _BARE_KEY.fullmatch(part) else json.dumps(part, ensure_ascii=False)
        out += f".{key}" if out else key
    return out


def resource_name_problem(name: str) -> str | None:
    """Why ``name`` breaks the resource naming rules, or None.

    Checked when the configuration loads, not when a job asks for the resource, so that the error
    reaches the operator who chose the name while they are still editing the file.
    """
    if "/" not in name:
        return f"resource name {name!r} needs a domain prefix, like 'example.com/{name}'"
    if not _RESOURCE_NAME.match(name):
        return (
            f"resource name {name!r} must be DOMAIN/NAME with a dotted domain, like 'example.com/cfd-license'"
            " (letters, digits and '-'; the name may also use '.' and '_')"
        )
    domain = name.split("/", 1)[0].lower()
    if domain == RESERVED_RESOURCE_DOMAIN or domain.endswith("." + RESERVED_RESOURCE_DOMAIN):
        return f"the domain {RESERVED_RESOURCE_DOMAIN}/ is reserved for XCE; use your own domain"
    return None


_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: A host's model, type or GPU model: one word, as ``select[model == X]`` reads it without quotes.
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")
_TRAITS = ("model", "type", "gpu_model")


def host_trait_errors(data: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """``[host_group_settings]`` names groups of ``[host_groups]``, and two groups of one host do not
    give it different models or types (which would win would depend on the groups' order)."""
    settings = data.get("host_group_settings")
    groups = data.get("host_groups")
    if not isinstance(settings, Mapping):
        return []
    groups = groups if isinstance(groups, Mapping) else {}
    problems: list[tuple[tuple[str | int, ...], str]] = []
    given: dict[tuple[str, str], tuple[str, Any]] = {}
    for gname, traits in settings.items():
        if gname not in groups:
            problems.append((("host_group_settings", gname), f"no group {gname!r} in [host_groups] (groups: "
                                                             f"{', '.join(sorted(groups)) or 'none'})"))
            continue
        if not isinstance(traits, Mapping) or not isinstance(groups[gname], list):
            continue
        for key in _TRAITS:
            value = traits.get(key)
            if value is None:
                continue
            for host in groups[gname]:
                other = given.setdefault((str(host), key), (gname, value))
                if other[1] != value:
                    problems.append((("host_group_settings", gname, key),
                                     f"host {host!r} is also in group {other[0]!r}, which gives it {key} "
                                     f"{other[1]!r}: give {key} in [hosts.{host}] or in one group"))
    return problems


def host_traits(cfg: "ClusterConfig", host: str) -> tuple[list[str], dict[str, str]]:
    """The features and the model/type/GPU model the configuration gives ``host``: its groups' and its own
    (features added up in that order, each once; its own model/type win over its groups')."""
    features: list[str] = []
    values: dict[str, str] = {}
    own = cfg.hosts.get(host)
    if own is None and not cfg.host_group_settings:
        return features, values  # the usual case, asked for every host at every submission
    for gname in sorted(cfg.host_group_settings):
        if host in cfg.host_groups.get(gname, ()):
            traits = cfg.host_group_settings[gname]
            features += [f for f in traits.features if f not in features]
            values.update({k: getattr(traits, k) for k in _TRAITS if getattr(traits, k) is not None})
    if own is not None:
        features += [f for f in own.features if f not in features]
        values.update({k: getattr(own, k) for k in _TRAITS if getattr(own, k) is not None})
    return features, values


def host_group_errors(data: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """``[host_groups]``: names a job's host list can use, so a group may not share a host's name
    (configured under ``[hosts]``; the controller refuses a clash with a registered host when a job
    names it), and its members are host names (not groups: one level, as people read them), each
    listed once."""
    groups = data.get("host_groups")
    if not isinstance(groups, Mapping):
        return []
    problems: list[tuple[tuple[str | int, ...], str]] = []
    configured = data.get("hosts")
    hosts = set(configured) if isinstance(configured, Mapping) else set()
    for gname, group in groups.items():
        path = ("host_groups", gname)
        if not _HOST_NAME.fullmatch(str(gname)):
            problems.append((path, "expected a group name of letters, digits, '.', '_' or '-', starting with a "
                                   "letter or digit"))
        elif gname in hosts:
            problems.append((path, f"{gname!r} is a host name (in [hosts]): a group needs a name no host has"))
        if not isinstance(group, list):
            continue
        if not group:
            problems.append((path, "an empty group: list its hosts, or remove it"))
        seen: set[str] = set()
        for i, member in enumerate(group):
            if not isinstance(member, str):
                continue
            if member in groups:
                problems.append(((*path, i), f"{member!r} is a group: list its hosts instead (groups do not nest)"))
            elif not _HOST_NAME.fullmatch(member):
                problems.append(((*path, i), f"{member!r} is not a host name (letters, digits, '.', '_' or '-')"))
            elif member in seen:
                problems.append(((*path, i), f"host {member!r} is listed twice"))
            seen.add(member)
    return problems


def reference_errors(data: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """Rules that span sections, as (key path, message) pairs.

    Pydantic validates one field at a time; these checks need the whole file. They take plain data
    (a parsed TOML table or ``model_dump()``) and skip whatever is malformed, so that the loader can
    report them together with type errors instead of one round of fixes later.
    """
    problems: list[tuple[tuple[str | int, ...], str]] = []
    fields = ClusterConfig.model_fields
    queues = data["queues"] if "queues" in data else fields["queues"].get_default(call_default_factory=True)
    projects = data["projects"] if "projects" in data else fields["projects"].get_default(call_default_factory=True)
    queue_names = sorted(queues) if isinstance(queues, Mapping) else None
    project_names = sorted(projects) if isinstance(projects, Mapping) else None

    def unknown(kind: str, value: str, names: list[str]) -> str:
        message = f"unknown {kind} {value!r}"
        close = difflib.get_close_matches(value, names, n=1)
        if close:
            message += f"; did you mean {close[0]!r}?"
        return f"{message} ({kind}s defined in this file: {', '.join(names) or 'none'})"

    default_queue = data.get("default_queue", fields["default_queue"].default)
    if queue_names is not None and isinstance(default_queue, str) and default_queue not in queue_names:
        if "default_queue" in data:
            problems.append((("default_queue",), unknown("queue", default_queue, queue_names)))
        else:
            problems.append((
                ("default_queue",),
                f"not set, so it is {default_queue!r}, but no queue has that name; set default_queue to one of the "
                f"queues defined in this file: {', '.join(queue_names) or 'none'}",
            ))
    if isinstance(queues, Mapping):
        for qname, q in queues.items():
            if not isinstance(q, Mapping):
                continue
            targets = q.get("preemptible_queues")
            if isinstance(targets, list) and queue_names is not None:
                for i, target in enumerate(targets):
                    if isinstance(target, str) and target not in queue_names:
                        path = ("queues", qname, "preemptible_queues", i)
                        problems.append((path, unknown("queue", target, queue_names)))
            project = q.get("project_name")
            if isinstance(project, str) and project_names is not None and project not in project_names:
                problems.append((("queues", qname, "project_name"), unknown("project", project, project_names)))
    problems.extend(host_group_errors(data))
    problems.extend(host_trait_errors(data))
    shared = data.get("shared_resources")
    if isinstance(shared, Mapping):
        for rname in shared:
            problem = resource_name_problem(str(rname))
            if problem:
                problems.append((("shared_resources", rname), problem))
    return problems
