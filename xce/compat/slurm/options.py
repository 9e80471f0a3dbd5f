"""sbatch's options, declared once: how each takes its value and what it does here.

Every option Slurm's sbatch(1) documents (22.05/23.02) is a row. The command lines of ``sbatch``,
``srun`` and ``salloc`` and the ``#SBATCH`` lines of a job script (read by ``xce submit``,
``sbatch`` and ``bsub < script``) all go through this table and one parser (glibc getopt's rules,
:mod:`xce.compat.slurm._getopt`), so an option means the same wherever it is written. Each row
says what the option does on this cluster:

* ``HONOUR``: translated to ``xce submit`` words (the job changes as Slurm would change it);
* ``KEEP``: kept with the job as ``--record NAME=VALUE``: it cannot matter here (accounting
  keys, CPU binding hints, a login environment only root could ask for), and it is not lost;
* ``REFUSE``: the job cannot be had as asked; the submission is refused with the reason;
* ``OWN``: the program's own (``--wrap``, ``--parsable``, ``--help``): the job is unchanged.

Standard library only; the value grammars are :mod:`xce.cli.jobscript`'s.
"""

from __future__ import annotations

import os

from xce.cli import jobscript as js
from xce.compat.slurm._getopt import NONE, OPTIONAL, REQUIRED, UsageError, parse

HONOUR, KEEP, REFUSE, OWN = "honour", "keep", "refuse", "own"


class Option:
    """One row: the long name (no dashes), its letter, how it takes a value, what it does, and
    ``how``: the xce words for a value (HONOUR), the record key (KEEP), the reason (REFUSE)."""

    __slots__ = ("name", "short", "takes", "does", "how")

    def __init__(self, name: str, short: str, takes: int, does: str, how=None):
        self.name, self.short, self.takes, self.does, self.how = name, short, takes, does, how

    def words(self, value: str | None) -> list[str]:
        """The ``xce submit`` words for this option given ``value``; Refused when it cannot be had."""
        text = "" if value is None else value
        if self.does == HONOUR:
            return self.how(text)
        if self.does == KEEP:
            return ["--record", f"{self.how}={text if value is not None else 'yes'}"]
        if self.does == REFUSE:
            raise js.Refused(f"--{self.name}: {self.how}")
        return []


def _same(flag: str):
    return lambda v: [flag, v]


def _flag(*words: str):
    return lambda v: list(words)


def _user(option: str, database: str):
    """``--uid``/``--gid``: Slurm lets only root submit as another user; naming oneself changes nothing."""
    def check(value: str) -> list[str]:
        import grp
        import pwd

        me = os.getuid() if database == "passwd" else os.getgid()
        try:
            entry = (pwd.getpwuid(me).pw_name if database == "passwd" else grp.getgrgid(me).gr_name)
        except KeyError:
            entry = None
        if value.strip() in (str(me), entry):
            return ["--record", f"{option}={value}"]
        if os.getuid() != 0:
            raise js.Refused(f"--{option} only permitted by root user")
        raise js.Refused(f"--{option}={value}: submitting as another user or group is not offered here; "
                         "submit as that user")
    return check


def _export(v: str) -> list[str]:
    from xce.cli.envcopy import from_slurm

    return ["--env", from_slurm(v)]


_NO_TASK_SHAPE = "this cluster places tasks on hosts by slots alone (sockets, cores and threads are not chosen)"

#: sbatch's options, in sbatch(1)'s order.
SBATCH_OPTIONS = (
    Option("account", "A", REQUIRED, HONOUR, _same("-P")),
    Option("acctg-freq", "", REQUIRED, KEEP, "acctg_freq"),
    Option("array", "a", REQUIRED, HONOUR, _same("--array")),
    Option("batch", "", REQUIRED, KEEP, "batch"),
    Option("bb", "", REQUIRED, REFUSE, "burst buffers are not offered here"),
    Option("bbf", "", REQUIRED, REFUSE, "burst buffers are not offered here"),
    Option("begin", "b", REQUIRED, HONOUR, lambda v: ["-b", js.slurm_begin(v)]),
    Option("chdir", "D", REQUIRED, HONOUR, _same("--cwd")),
    Option("cluster-constraint", "", REQUIRED, KEEP, "cluster_constraint"),
    Option("clusters", "M", REQUIRED, KEEP, "clusters"),
    Option("comment", "", REQUIRED, KEEP, "comment"),
    Option("constraint", "C", REQUIRED, HONOUR, _same("--constraint")),
    Option("container", "", REQUIRED, REFUSE, "OCI containers are not offered here"),
    Option("container-id", "", REQUIRED, REFUSE, "OCI containers are not offered here"),
    Option("contiguous", "", NONE, KEEP, "contiguous"),
    Option("core-spec", "S", REQUIRED, KEEP, "core_spec"),
    Option("cores-per-socket", "", REQUIRED, KEEP, "cores_per_socket"),
    Option("cpu-freq", "", REQUIRED, KEEP, "cpu_freq"),
    Option("cpus-per-gpu", "", REQUIRED, HONOUR, _same("--cpus-per-gpu")),
    Option("cpus-per-task", "c", REQUIRED, HONOUR, _same("-c")),
    Option("deadline", "", REQUIRED, REFUSE, "this cluster does not end pending jobs at a deadline"),
    Option("delay-boot", "", REQUIRED, KEEP, "delay_boot"),
    Option("dependency", "d", REQUIRED, HONOUR, _same("--dependency")),
    Option("distribution", "m", REQUIRED, KEEP, "distribution"),
    Option("error", "e", REQUIRED, HONOUR, _same("-e")),
    Option("exclude", "x", REQUIRED, HONOUR, _same("--exclude")),
    Option("exclusive", "", OPTIONAL, HONOUR, js.slurm_exclusive),
    Option("export", "", REQUIRED, HONOUR, _export),
    Option("export-file", "", REQUIRED, REFUSE, "reading variables from a file is not offered here; name them "
           "with --export"),
    Option("extra", "", REQUIRED, KEEP, "extra"),
    Option("extra-node-info", "B", REQUIRED, KEEP, "extra_node_info"),
    Option("get-user-env", "", OPTIONAL, KEEP, "get_user_env"),  # sbatch(1): only root's caller gets it
    Option("gid", "", REQUIRED, HONOUR, _user("gid", "group")),
    Option("gpu-bind", "", REQUIRED, KEEP, "gpu_bind"),
    Option("gpu-freq", "", REQUIRED, KEEP, "gpu_freq"),
    Option("gpus", "G", REQUIRED, HONOUR, _same("--gpus")),
    Option("gpus-per-node", "", REQUIRED, HONOUR, _same("--gpus-per-node")),
    Option("gpus-per-socket", "", REQUIRED, REFUSE, _NO_TASK_SHAPE + "; give --gpus-per-node"),
    Option("gpus-per-task", "", REQUIRED, HONOUR, _same("--gpus-per-task")),
    Option("gres", "", REQUIRED, HONOUR, _same("--gres")),
    Option("gres-flags", "", REQUIRED, KEEP, "gres_flags"),
    Option("help", "h", NONE, OWN),
    Option("hint", "", REQUIRED, KEEP, "hint"),
    Option("hold", "H", NONE, HONOUR, _flag("-H")),
    Option("ignore-pbs", "", NONE, KEEP, "ignore_pbs"),
    Option("input", "i", REQUIRED, REFUSE, "a batch job here reads no standard input of its own; let the script "
           "read the file"),
    Option("job-name", "J", REQUIRED, HONOUR, _same("-J")),
    Option("kill-on-invalid-dep", "", REQUIRED, KEEP, "kill_on_invalid_dep"),
    Option("licenses", "L", REQUIRED, KEEP, "licenses"),
    Option("mail-type", "", REQUIRED, HONOUR, _same("--mail-type")),
    Option("mail-user", "", REQUIRED, HONOUR, _same("--mail-user")),
    Option("mcs-label", "", REQUIRED, KEEP, "mcs_label"),
    Option("mem", "", REQUIRED, HONOUR, _same("--mem")),
    Option("mem-bind", "", REQUIRED, KEEP, "mem_bind"),
    Option("mem-per-cpu", "", REQUIRED, HONOUR, _same("--mem-per-cpu")),
    Option("mem-per-gpu", "", REQUIRED, HONOUR, _same("--mem-per-gpu")),
    Option("mincpus", "", REQUIRED, KEEP, "mincpus"),
    Option("network", "", REQUIRED, KEEP, "network"),
    Option("nice", "", OPTIONAL, HONOUR, lambda v: ["--priority", js.slurm_nice(v)]),
    Option("no-kill", "k", OPTIONAL, KEEP, "no_kill"),
    Option("no-requeue", "", NONE, HONOUR, _flag("--no-rerunnable")),
    Option("nodefile", "F", REQUIRED, REFUSE, "give the hosts with --nodelist (a host file is not read here)"),
    Option("nodelist", "w", REQUIRED, HONOUR, _same("--hosts")),
    Option("nodes", "N", REQUIRED, HONOUR, _same("--nodes")),
    Option("ntasks", "n", REQUIRED, HONOUR, _same("-n")),
    Option("ntasks-per-core", "", REQUIRED, KEEP, "ntasks_per_core"),
    Option("ntasks-per-gpu", "", REQUIRED, HONOUR, _same("--ntasks-per-gpu")),
    Option("ntasks-per-node", "", REQUIRED, HONOUR, _same("--ntasks-per-node")),
    Option("ntasks-per-socket", "", REQUIRED, KEEP, "ntasks_per_socket"),
    Option("open-mode", "", REQUIRED, HONOUR, _same("--open-mode")),
    Option("output", "o", REQUIRED, HONOUR, _same("-o")),
    Option("overcommit", "O", NONE, KEEP, "overcommit"),
    Option("oversubscribe", "s", NONE, KEEP, "oversubscribe"),
    Option("parsable", "", NONE, OWN),
    Option("partition", "p", REQUIRED, HONOUR, lambda v: ["-q", js.slurm_partition(v)]),
    Option("power", "", REQUIRED, KEEP, "power"),
    Option("prefer", "", REQUIRED, KEEP, "prefer"),
    Option("priority", "", REQUIRED, KEEP, "priority"),  # an operator's setting in Slurm
    Option("profile", "", REQUIRED, KEEP, "profile"),
    Option("propagate", "", OPTIONAL, KEEP, "propagate"),
    Option("qos", "q", REQUIRED, KEEP, "qos"),
    Option("quiet", "Q", NONE, OWN),
    Option("reboot", "", NONE, KEEP, "reboot"),
    Option("requeue", "", NONE, HONOUR, _flag("--rerunnable")),
    Option("reservation", "", REQUIRED, KEEP, "reservation"),
    Option("signal", "", REQUIRED, HONOUR, _same("--signal")),
    Option("sockets-per-node", "", REQUIRED, KEEP, "sockets_per_node"),
    Option("spread-job", "", NONE, KEEP, "spread_job"),
    Option("switches", "", REQUIRED, KEEP, "switches"),
    # Not in sbatch(1), but sbatch reads it (slurm_opt.c: "tasks-per-node", an alias of ntasks-per-node)
    Option("tasks-per-node", "", REQUIRED, HONOUR, _same("--ntasks-per-node")),
    Option("test-only", "", NONE, REFUSE, "this cluster does not forecast start times"),
    Option("thread-spec", "", REQUIRED, KEEP, "thread_spec"),
    Option("threads-per-core", "", REQUIRED, KEEP, "threads_per_core"),
    Option("time", "t", REQUIRED, HONOUR, _same("--time")),
    Option("time-min", "", REQUIRED, KEEP, "time_min"),
    Option("tmp", "", REQUIRED, KEEP, "tmp"),
    Option("tres-per-task", "", REQUIRED, KEEP, "tres_per_task"),
    Option("uid", "", REQUIRED, HONOUR, _user("uid", "passwd")),
    Option("usage", "", NONE, OWN),
    Option("use-min-nodes", "", NONE, KEEP, "use_min_nodes"),
    Option("verbose", "v", NONE, OWN),
    Option("version", "V", NONE, OWN),
    Option("wait", "W", NONE, OWN),
    Option("wait-all-nodes", "", REQUIRED, KEEP, "wait_all_nodes"),
    Option("wckey", "", REQUIRED, KEEP, "wckey"),
    Option("wrap", "", REQUIRED, OWN),
)
SBATCH = {o.name: o for o in SBATCH_OPTIONS}
#: Options whose meaning is sbatch's own run, never the job's (srun and salloc have theirs).
SBATCH_ONLY = ("array", "wrap", "parsable", "output", "error", "open-mode", "signal", "help", "usage", "version",
               "quiet", "verbose", "test-only", "wait", "input", "batch", "ignore-pbs", "export-file", "get-user-env",
               "kill-on-invalid-dep", "no-kill", "oversubscribe", "overcommit", "distribution", "mem-bind",
               "propagate", "cpu-freq", "hint")


def getopt_table(rows=SBATCH_OPTIONS, extra: dict[str, int] | None = None,
                 extra_shorts: dict[str, str] | None = None) -> tuple[dict[str, int], dict[str, str]]:
    """The long names and letters getopt reads, from ``rows`` and a program's own ``extra``."""
    longs = {o.name: o.takes for o in rows}
    shorts = {o.short: o.name for o in rows if o.short}
    longs.update(extra or {})
    shorts.update(extra_shorts or {})
    return longs, shorts


_LONGS, _SHORTS = getopt_table()


def job_words(opts: list[tuple[str, str | None]], table: dict[str, Option] = SBATCH) -> list[str]:
    """``xce submit`` words for the table's options among ``opts`` (others are the program's);
    Refused for one that cannot be honoured."""
    words: list[str] = []
    for name, value in opts:
        option = table.get(name)
        if option is not None:
            words += option.words(value)
    return words


def directive(words: list[str]) -> list[str]:
    """One ``#SBATCH`` line as ``xce submit`` words: getopt's rules, this table, sbatch's messages."""
    try:
        opts, operands = parse(words, _LONGS, _SHORTS, stop_at_operand=True)
    except UsageError as exc:
        raise js.Refused(str(exc)) from None
    if operands:  # sbatch: what getopt leaves on a directive line is an error, not the command
        raise js.Refused(f"Invalid directive found in batch script: {operands[0]}")
    for name, _ in opts:
        if name == "wrap":
            raise js.Refused("--wrap: a job script cannot also give --wrap (sbatch refuses it too)")
        if name == "wait":  # sbatch's own run, decided before the script is read here
            raise js.Refused("--wait: give it on sbatch's command line, not in the script")
    return job_words(opts)
