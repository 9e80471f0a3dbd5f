"""Request bodies of the REST API, with the size bounds that keep one request from hurting the cluster.

Models are strict (a JSON string is not an integer, ``1.5`` is not a task count) and forbid
unknown fields, so a misspelt field is a 422 rather than a silently ignored option; in
particular a job's owner can never come from the body. Checks that need the cluster's
configuration or the resource-requirement parser live in :mod:`xce.controller.jobs.submission`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from xce.endcodes import CODES

MAX_ARGS = 4096
MAX_ARG_LEN = 65536
MAX_COMMAND_BYTES = 256 * 1024
MAX_REQUEST_LEN = 4096
MAX_NAME_LEN = 128
MAX_PATH_LEN = 4096
MAX_ENV = 1024
MAX_ENV_BYTES = 256 * 1024
#: A spooled job script (Slurm's default max_script_size is 4 MB; LSF has no limit but its spool disk).
MAX_SCRIPT_BYTES = 4 * 1024 * 1024
MAX_RESOURCES = 64
MAX_TASKS = 1_000_000
MAX_ARRAY = 100_000
MAX_PRIORITY = 1_000_000
MAX_DECISIONS = 100_000

#: Identifiers and times are stored as 64-bit integers; anything wider is refused here (422), never
#: handed to the database.
MAX_ID = 2**63 - 1
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Int32 = Annotated[int, Field(ge=-2**31, le=2**31 - 1)]

Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_LEN)]
Path_ = Annotated[str, Field(min_length=1, max_length=MAX_PATH_LEN)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


#: A year: longer is a typo, not a plan.
MAX_RUN_LIMIT_S = 366 * 24 * 3600


class SubmitRequest(_Body):
    """One job, or with ``array: N`` N jobs alike except for their ids and ``array_index``."""

    command: list[Annotated[str, Field(max_length=MAX_ARG_LEN)]] = Field(
        ..., min_length=1, max_length=MAX_ARGS, description="Program and arguments (argv), run without a shell.")
    queue: Name | None = Field(None, description="Queue name; the configuration's default_queue when absent.")
    tasks: int = Field(1, ge=1, le=MAX_TASKS, description="Number of tasks (slots).")
    request: str = Field("", max_length=MAX_REQUEST_LEN, description="Resource requirement string (-R).")
    project: Name | None = Field(None, description="Project charged; the queue's project or 'default' when absent.")
    job_type: str = Field("", max_length=MAX_NAME_LEN, description="Job type, for drift reports.")
    priority: int = Field(0, ge=-MAX_PRIORITY, le=MAX_PRIORITY, description="User priority; higher runs first.")
    requests: dict[str, Any] = Field(
        default_factory=dict, max_length=MAX_RESOURCES,
        description="Resources reserved: name -> quantity, a JSON number exactly (mem in bytes) or text in the "
        "quantity grammar (\"2G\" = \"2GB\" = \"2g\", powers of 1024; mem in MiB without a unit). Folded into rusage[].")
    limits: dict[str, Any] = Field(
        default_factory=dict, max_length=MAX_RESOURCES,
        description="Caps the worker enforces: name -> quantity, as in requests.")
    run_limit: int | None = Field(
        None, ge=1, le=MAX_RUN_LIMIT_S, description="Run limit in seconds (-W/--time): the worker ends the job when "
        "it has run this long. Absent: the queue's run_limit, else its max_run_limit, else none.")
    cwd: Path_ | None = Field(None, description="Working directory on the execution host.")
    env: dict[str, Annotated[str, Field(max_length=MAX_ARG_LEN)]] = Field(
        default_factory=dict, max_length=MAX_ENV, description="Environment variables for the job.")
    stdout: Path_ | None = Field(None, description="Output file; %J is the job id, %I the array index.")
    stderr: Path_ | None = Field(None, description="Error file; %J is the job id, %I the array index.")
    array: int | Annotated[str, Field(max_length=MAX_REQUEST_LEN)] | None = Field(None, description="An array: N elements (indexes 1..N), or indexes with an optional running "
                       "limit, '1-100:2%10' (elements 1, 3, .. 99, at most 10 running at once).")
    name: Name | None = Field(None, description="Job name (-J); not all digits, no brackets or spaces.")
    hold: bool = Field(False, description="Submit held (-H): it pends until released.")
    begin_time: int | None = Field(None, ge=0, le=MAX_ID, description="Do not start before this time (ns since the "
                                   "epoch, -b).")
    depend: str | None = Field(None, min_length=1, max_length=MAX_REQUEST_LEN,
                               description="Dependency in LSF's words (-w): 'done(12) && (exit(14, 1) || ended(prep))'.")
    allow_pending_forever: bool = Field(False, description="Accept a job that can never run on the cluster as it "
                                        "is now (it pends until the cluster grows).")
    rerunnable: bool = Field(False, description="Run the job again elsewhere if its host is declared down.")
    script: Annotated[str, Field(max_length=MAX_SCRIPT_BYTES)] | None = Field(
        None, description="The job script's content, spooled with the job: the worker writes it to a file only the "
        "owner can read and runs that copy (command[0] names it; its #! line chooses the interpreter, /bin/sh "
        "without one), so the submitted file may be deleted at once.")
    exclusive: bool = Field(False, description="No other job on the job's hosts while it runs (bsub -x, sbatch "
                            "--exclusive); it starts only on hosts that run nothing.")
    hosts: list[Name] | None = Field(None, max_length=MAX_ARGS, description="Run only on these hosts or host groups "
                                     "(bsub -m, sbatch -w).")
    exclude_hosts: list[Name] | None = Field(None, max_length=MAX_ARGS, description="Never on these hosts or host "
                                             "groups (sbatch -x/--exclude).")
    nodes: int | None = Field(None, ge=1, le=MAX_TASKS, description="Exactly this many hosts (sbatch -N); the tasks "
                              "are spread evenly over them.")
    cpus_per_task: int = Field(1, ge=1, le=MAX_TASKS, description="Slots of each task (sbatch -c): tasks counts "
                               "slots, so it must be a multiple of this.")
    warn_signal: Annotated[str, Field(max_length=32)] | None = Field(
        None, description="Signal sent warn_time seconds before the run limit (sbatch --signal, bsub -wa).")
    warn_time: int | None = Field(None, ge=1, le=MAX_RUN_LIMIT_S, description="Seconds before the run limit at "
                                  "which warn_signal is sent (sbatch --signal=SIG@SECONDS, bsub -wt).")
    warn_batch_only: bool = Field(False, description="The warning signal goes to the job script's shell only, not "
                                  "to every process of the job (sbatch --signal=B:SIG@S).")
    open_mode: Literal["append", "truncate"] = Field("append", description="How output files are opened: "
                                                     "appended to (bsub -o) or truncated first (bsub -oo, sbatch).")
    interactive: bool = Field(False, description="An interactive job (bsub -Is, srun --pty): its standard input, "
                              "output and error are a terminal the submitter attaches to.")
    submit_host: Name | None = Field(None, description="The host the job was submitted from ($XCE_SUBMIT_HOST).")
    submit_dir: Path_ | None = Field(None, description="The directory it was submitted from ($XCE_SUBMIT_DIR, "
                                     "$SLURM_SUBMIT_DIR); cwd when absent.")
    constraint: str | None = Field(
        None, min_length=1, max_length=MAX_REQUEST_LEN, description="Host features the job needs, in Slurm's "
        "`--constraint` grammar: `a&b`, `a|b`, parentheses; `[a|b]` (all hosts the same one) for a job on one host. "
        "Refused when no host has a feature it names (`Invalid feature specification`).")
    gpu_model: Name | None = Field(
        None, description="The model of GPU the job's GPUs must be (`sbatch --gres=gpu:MODEL:N`, `bsub -gpu "
        "gmodel=MODEL`): it runs only on hosts whose GPUs are that model.")
    recorded: dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=MAX_REQUEST_LEN)]] = Field(
        default_factory=dict, max_length=64, description="Options accepted and kept with the job that have no "
        "effect on this cluster (mail, wckey, comment ...), by name.")


class HostDownRequest(_Body):
    requeue: bool = Field(False, description="Put the host's rerunnable jobs back to PEND instead of ending them.")


class HostCloseRequest(_Body):
    reason: str = Field("", max_length=256, description="Why, shown by `xce hosts`.")


class QueueCloseRequest(_Body):
    reason: str = Field("", max_length=256, description="Why, shown by `xce queues`.")


class ActRequest(_Body):
    """One action on many jobs, named as people write them (``xce kill 12 13[2] sweep``)."""

    action: Literal["kill", "suspend", "resume", "hold", "release", "requeue"]
    jobs: list[Annotated[str, Field(min_length=1, max_length=MAX_NAME_LEN + 64)]] = Field(
        default_factory=list, max_length=MAX_ARGS, description="Job ids, ID[INDEX], ID[1-5], or names.")
    all: bool = Field(False, description="Every unfinished job of the caller (`xce kill 0`).")
    queue: Name | None = Field(None, description="Only jobs of this queue.")
    name: Name | None = Field(None, description="Every unfinished job of the caller with this name (-J).")
    user: Name | None = Field(None, description="Admins: with all, queue or name, another user's jobs instead of "
                              "their own; 'all' for everyone's (bkill -u).")
    signal: str | None = Field(None, max_length=32, description="kill only: send this signal instead (SIGUSR1, 10).")
    orphans: bool = Field(False, description="Every pending job of the caller whose dependency can never be met.")


class ModifyRequest(_Body):
    """What ``xce modify`` (LSF bmod) changes; every field but priority, queue and project only while
    the job pends, checked as at submission."""

    priority: int | None = Field(None, ge=-MAX_PRIORITY, le=MAX_PRIORITY)
    queue: Name | None = None
    project: Name | None = None
    name: Name | None = None
    tasks: int | None = Field(None, ge=1, le=MAX_TASKS)
    request: str | None = Field(None, max_length=MAX_REQUEST_LEN)
    stdout: Path_ | None = None
    stderr: Path_ | None = None
    begin_time: int | None = Field(None, ge=0, le=MAX_ID, description="0 removes the begin time.")
    depend: str | None = Field(None, max_length=MAX_REQUEST_LEN, description="'' removes the dependency.")
    requests: dict[str, Any] | None = Field(
        None, max_length=MAX_RESOURCES, description="Merged into the job's requests, as at submission; a quantity of 0 removes one.")
    limits: dict[str, Any] | None = Field(
        None, max_length=MAX_RESOURCES, description="Merged into the job's limits, as at submission; a quantity of 0 removes one.")
    run_limit: int | None = Field(
        None, ge=0, le=MAX_RUN_LIMIT_S, description="Run limit in seconds, also while the job runs (within the "
        "queue's max_run_limit); 0 gives it its queue's default again.")


class DecisionEnvelope(_Body):
    id: str = Field(..., min_length=1, max_length=128, description="Unique id; a repeated id is applied once.")
    ts: int = Field(0, ge=0, le=MAX_ID, description="Logical time of the round that made it (ns).")
    decision: dict[str, Any] = Field(..., description="Decision.to_json() of xce.core.decisions.")


class RoundFigures(_Body):
    """How one scheduling round went, for ``/metrics`` and the dashboard (xce.controller.sched.schedwatch)."""

    ts: int = Field(..., ge=0, description="Wall-clock time the round started (ns).")
    duration_s: float = Field(..., ge=0, le=86400, description="How long the round took, seconds.")
    decisions: int = Field(..., ge=0, le=10 * MAX_DECISIONS, description="Decisions the round made.")


class DecisionsRequest(_Body):
    decisions: list[DecisionEnvelope] = Field(..., max_length=MAX_DECISIONS)
    rounds: list[RoundFigures] = Field(
        default_factory=list, max_length=10_000,
        description="Figures of the rounds run since the last post (may come with no decisions).")


class RegisterRequest(_Body):
    name: Name = Field(..., description="Host name.")
    resources: dict[str, Any] = Field(
        default_factory=dict, max_length=256,
        description="Static values: slots, maxmem (bytes), ncpus, type, model, provider capacities.")
    load: dict[str, Any] = Field(default_factory=dict, max_length=256, description="First load report.")
    running: list[Id] | None = Field(
        None, max_length=MAX_TASKS, description="Job ids this worker still runs (after a worker restart).")
    runs: dict[Annotated[str, Field(pattern=r"^[0-9]{1,18}$")], int] | None = Field(
        None, max_length=MAX_TASKS, description="Which run of each of `running` it is, where the worker knows it: "
        "the `run` of the job's start action. A job dispatched again since (requeued) is killed, not adopted.")
    containment: Literal["cgroup-v2", "cgroup-v1", "process-group"] | None = Field(
        None, description="What holds each job's processes together on this host.")
    task_address: str | None = Field(
        None, max_length=300, pattern=r"^[0-9A-Za-z.:\[\]-]+:[0-9]{1,5}$",
        description="HOST:PORT where this worker starts the tasks of parallel jobs (`xce launch`).")
    enforces: list[Annotated[str, Field(max_length=300)]] = Field(
        default_factory=list, max_length=256,
        description="Provider resources this worker can hold a job to with `--limit NAME=N`.")
    features: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list, max_length=256,
        description="Host features (`xce worker --feature`): words `--constraint` and `select[NAME]` match; the "
        "configuration's (`[hosts.NAME] features`) are added to them.")


class LoadReport(_Body):
    load: dict[str, Any] = Field(default_factory=dict, max_length=256,
                                 description="Load indices: mem, swp, r15s, r1m, r15m, ut ...")
    usage: dict[str, dict[str, Any]] = Field(
        default_factory=dict, max_length=100_000, description="Optional usage ticks by job id.")
    runs: dict[Annotated[str, Field(pattern=r"^[0-9]{1,18}$")], int] = Field(
        default_factory=dict, max_length=100_000,
        description="The run (the `run` of its start action) of every job this worker holds, those still starting "
                    "included: a tick of another run than the job's current one is answered with a kill of that "
                    "run, and no run listed here is declared lost.")
    task_address: str | None = Field(
        None, max_length=300, pattern=r"^[0-9A-Za-z.:\[\]-]+:[0-9]{1,5}$",
        description="HOST:PORT of this worker's task server, repeated so a restarted controller learns it again.")
    trouble: str | None = Field(
        None, max_length=500,
        description="Why this worker cannot take new jobs now (its job journal cannot be written): the host "
                    "is closed to new jobs while a report says so, and opened again by the first that does not.")


class JobStatusReport(_Body):
    status: Literal["started", "usage", "running", "suspended", "resumed", "finished", "rejected", "start_failed"]
    run: int | None = Field(
        None, description="Which run of the job this is about (the `run` of its start action): a report about "
        "another run than the job's current one changes nothing but that run (it is told to stop).")
    usage: dict[str, Any] | None = Field(None, max_length=256)
    exit_code: Int32 | None = None
    signal: str | None = Field(None, max_length=32)
    reason: str = Field("", max_length=4096)
    pid: Int32 | None = None
    end: Literal[CODES] | None = Field(  # type: ignore[valid-type]
        None, description="finished: how the job ended, where the worker knows (RUNLIMIT, MEMLIMIT, NODE_FAIL ...); "
        "the controller decides the rest.")


class JobReport(JobStatusReport):
    jobid: int = Field(..., ge=1, description="The job this report is about.")


class JobReportBatch(_Body):
    reports: list[JobReport] = Field(..., max_length=10_000,
                                     description="Reports in the order the worker made them; applied in that order.")


class UserRequest(_Body):
    name: Name = Field(..., description="A Unix user name: the owner of the jobs the token submits.")
    admin: bool = False


MAX_TOKEN_LIFETIME_S = 10 * 366 * 86400


class TokenRequest(_Body):
    name: Name = Field(..., description="Who the token speaks for: a Unix user name (roles user, admin), a host name "
                       "or '*' (worker), a service name (scheduler, metrics).")
    role: Literal["user", "admin", "worker", "scheduler", "metrics"] = "user"
    expires_in_s: int | None = Field(None, ge=1, le=MAX_TOKEN_LIFETIME_S,
                                     description="Lifetime in seconds; none: valid until revoked.")
    note: str = Field("", max_length=256, description="Why the token exists, for `xceadmin token list`.")


class RecordRequest(_Body):
    action: Literal["start", "stop"]
    file: str | None = Field(None, max_length=MAX_PATH_LEN)
    snapshot_interval: int | None = Field(None, ge=0, le=2**31 - 1)
