"""The Slurm front-ends' options, one table each: their parsers read them (getopt's names),
``--help`` prints them, ``man`` and shell completion are made from them (:mod:`xce.compat.optable`).

sbatch, srun and salloc share sbatch's job options (:mod:`xce.compat.slurm.options`, where what
each does here is declared); their help lines are :data:`JOB_HELP`, and the options that are the
program's own (srun's ``--label``, salloc's ``--bell``) are rows here. ``refused`` is each
parser's own table of refusals, read when help is printed.
"""

from __future__ import annotations

from xce.compat.optable import HONOUR, IGNORE, KEEP, OPTIONAL, REFUSE, REQUIRED, Flag, Program

_HELP = (Flag("help", "h", help="show this help message"),
         Flag("usage", help="display a brief summary of the options"),
         Flag("version", "V", help="output version information and exit"))
_CLUSTERS = Flag("clusters", "M", REQUIRED, "names", "clusters to ask (this cluster is the only one)", IGNORE)
_FED = (Flag("federation", help="show jobs of the whole federation (one cluster here)", does=IGNORE),
        Flag("local", help="show only this cluster's jobs (all of them here)", does=IGNORE))

SQUEUE = Program("squeue", "slurm", "Usage: squeue [OPTIONS]", "view the jobs in the queue", (
    Flag("account", "A", REQUIRED, "account(s)", "comma separated list of accounts to view", IGNORE),
    Flag("all", "a", help="display jobs in hidden partitions (none are hidden here)", does=IGNORE),
    Flag("array", "r", help="display one job array element per line"),
    Flag("array-unique", help="display one unique pending job array element per line", does=IGNORE),
    _CLUSTERS, *_FED,
    Flag("format", "o", REQUIRED, "format", "format specification (%i %P %j %u %t %M %D %R ...)"),
    Flag("Format", "O", REQUIRED, "format", "long format specification (JobID,Partition,Name,State ...)"),
    Flag("hide", help="do not display jobs in hidden partitions", does=IGNORE),
    Flag("iterate", "i", REQUIRED, "seconds", "specify an interation period"),
    Flag("jobs", "j", OPTIONAL, "job(s)", "comma separated list of jobs IDs to view, default is all",
         complete="jobs"),
    Flag("json", help="produce JSON output (Slurm 23.02's data_parser v0.0.39)"),
    Flag("long", "l", help="long report"),
    Flag("me", help="equivalent to --user=$USER"),
    Flag("name", "n", REQUIRED, "job_name(s)", "comma separated list of job names to view"),
    Flag("noheader", "h", help="no headers on output"),
    Flag("nodelist", "w", REQUIRED, "hostlist", "list of nodes to view (not filtered here)", IGNORE,
         complete="hosts"),
    Flag("only-job-state", help="only show the job state (all columns are fetched here)", does=IGNORE),
    Flag("partition", "p", REQUIRED, "partition(s)", "comma separated list of partitions to view, default is all",
         complete="queues"),
    Flag("qos", "q", REQUIRED, "qos(s)", "comma separated list of qos's to view", IGNORE),
    Flag("sibling", help="show jobs on sibling clusters (none here)", does=IGNORE),
    Flag("sort", "S", REQUIRED, "fields", "comma separated list of fields to sort on (queue order here)", IGNORE),
    Flag("start", help="print expected start times of pending jobs"),
    Flag("states", "t", REQUIRED, "state(s)", "comma separated list of states to view, default is pending and running,"
         " '--states=all' reports all states", complete=("all", "PENDING", "RUNNING", "SUSPENDED", "COMPLETED",
                                                          "CANCELLED", "FAILED", "TIMEOUT")),
    Flag("steps", "s", OPTIONAL, "step(s)", "comma separated list of job steps to view"),
    Flag("user", "u", REQUIRED, "user_name(s)", "comma separated list of users to view", complete="users"),
    Flag("verbose", "v", help="verbosity level", does=IGNORE),
    Flag("help", help="show this help message"),
    Flag("usage", help="display a brief summary of squeue options"),
    Flag("version", "V", help="output version information and exit"),
))

SACCT = Program("sacct", "slurm", "Usage: sacct [<OPTION>]", "displays accounting data for finished and running jobs", (
    Flag("allusers", "a", help="display jobs for all users"),
    Flag("accounts", "A", REQUIRED, "account_list", "only send data about these accounts", IGNORE),
    Flag("array", help="expand job arrays (each element is a row here)", does=IGNORE),
    Flag("brief", "b", help="display a brief listing (jobid, state, exitcode)"),
    Flag("duplicates", "D", help="display requeued and duplicate jobs", does=IGNORE),
    Flag("delimiter", "", REQUIRED, "characters", "ASCII characters used to separate the fields "
         "when -p or -P is given (default '|')"),
    Flag("endtime", "E", REQUIRED, "time", "select jobs eligible before this time"),
    Flag("helpformat", "e", help="print a list of fields that can be specified with the '--format' option"),
    Flag("help", "h", help="print this description of use"),
    Flag("jobs", "j", REQUIRED, "job(.step)", "display information about this job or comma-separated list of jobs",
         complete="jobs"),
    Flag("json", "", OPTIONAL, "data_parser", "produce JSON output"),
    Flag("long", "l", help="equivalent to specifying '--format=jobid,jobname,partition,...' (every field)"),
    Flag("allclusters", "L", help="display jobs ran on all clusters (this one here)", does=IGNORE),
    _CLUSTERS, *_FED,
    Flag("name", "", REQUIRED, "jobname_list", "display jobs that have any of these name(s)"),
    Flag("noconvert", help="don't convert units from their original type (e.g. 2048M won't be converted to 2G)"),
    Flag("noheader", "n", help="no header will be added to the beginning of output"),
    Flag("format", "o", REQUIRED, "field_list", "comma separated list of fields (use \"--helpformat\" for a list)"),
    Flag("parsable", "p", help="output will be '|' delimited with a '|' at the end"),
    Flag("parsable2", "P", help="output will be '|' delimited without a '|' at the end"),
    Flag("partition", "r", REQUIRED, "partition_list", "only send data about jobs run on these partitions",
         complete="queues"),
    Flag("state", "s", REQUIRED, "state_list", "select jobs based on their state during the time period given "
         "(CA,CD,F,NF,OOM,PD,R,TO ...)"),
    Flag("starttime", "S", REQUIRED, "time", "select jobs eligible after this time (default: 00:00:00 today)"),
    Flag("truncate", "T", help="truncate time: jobs are reported for the window only", does=IGNORE),
    Flag("uid", "", REQUIRED, "uid_list", "same as --user"),
    Flag("units", "", REQUIRED, "[KMGTP]", "display values in specified unit type"),
    Flag("user", "u", REQUIRED, "user_list", "display jobs for these users (default: the caller)", complete="users"),
    Flag("usage", help="display a command usage summary"),
    Flag("verbose", "v", help="primarily for debugging purposes", does=IGNORE),
    Flag("version", "V", help="print version"),
    Flag("allocations", "X", help="only show statistics relevant to the job allocation itself, not its steps"),
    Flag("yaml", "", OPTIONAL, "data_parser", "produce YAML output"),
))

SINFO = Program("sinfo", "slurm", "Usage: sinfo [OPTIONS]", "view information about nodes and partitions", (
    Flag("all", "a", help="show all partitions (including hidden and those not accessible)", does=IGNORE),
    Flag("dead", "d", help="show only non-responding nodes", does=IGNORE),
    Flag("exact", "e", help="group nodes only on exact match of configuration", does=IGNORE),
    Flag("format", "o", REQUIRED, "format", "format specification (%P %a %l %D %t %N ...)"),
    Flag("Format", "O", REQUIRED, "format", "long format specification (CPUs,Memory,Partition ...)"),
    Flag("hide", help="do not show hidden or non-accessible partitions", does=IGNORE),
    Flag("long", "l", help="long output - displays more information"),
    _CLUSTERS, Flag("local", help="show only local cluster in a federation (all here)", does=IGNORE),
    Flag("nodes", "n", REQUIRED, "nodes", "report on specific node(s)", IGNORE, complete="hosts"),
    Flag("Node", "N", help="Node-centric format"),
    Flag("noheader", "h", help="no headers on output"),
    Flag("partition", "p", REQUIRED, "partition", "report on specific partition", complete="queues"),
    Flag("responding", "r", help="report only responding nodes", does=IGNORE),
    Flag("summarize", "s", help="report state summary only", does=IGNORE),
    Flag("states", "t", REQUIRED, "node_state", "specify the what states of nodes to view", IGNORE),
    Flag("verbose", "v", help="verbosity level", does=IGNORE),
    Flag("help", help="show this help message"),
    Flag("usage", help="display brief usage message"),
    Flag("version", "V", help="output version information and exit"),
))

SCONTROL = Program(
    "scontrol", "slurm", "Usage: scontrol [<OPTION>] [<COMMAND>]", "view and change jobs (the probes tools use)", (
        Flag("all", "a", help="equivalent to \"all\" command (every partition is shown here)", does=IGNORE),
        Flag("details", "d", help="equivalent to \"details\" command", does=IGNORE),
        _CLUSTERS, *_FED, Flag("sibling", help="show sibling jobs on a federated cluster (none here)", does=IGNORE),
        Flag("help", "h", help="equivalent to \"help\" command"),
        Flag("hide", help="equivalent to \"hide\" command", does=IGNORE),
        Flag("oneliner", "o", help="equivalent to \"oneliner\" command"),
        Flag("quiet", "Q", help="equivalent to \"quiet\" command"),
        Flag("usage", "u", help="show a brief summary of the commands"),
        Flag("verbose", "v", help="equivalent to \"verbose\" command", does=IGNORE),
        Flag("version", "V", help="equivalent to \"version\" command"),
    ), operand="COMMAND",
    complete={(): ("show", "requeue", "requeuehold", "hold", "uhold", "release", "version"),
              ("show",): ("config", "job", "partition", "node", "hostnames"),
              ("show", "job"): "jobs", ("show", "partition"): "queues", ("show", "node"): "hosts",
              ("requeue",): "jobs", ("requeuehold",): "jobs", ("hold",): "jobs", ("uhold",): "jobs",
              ("release",): "jobs"},
    notes="Commands:\n  show config | show job [ID] | show partition [NAME] | show node [NAME] | show hostnames [LIST]\n"
          "  requeue ID | requeuehold ID | hold ID | uhold ID | release ID | version\n"
          "Any other command is refused as Slurm refuses an invalid keyword.")

SCANCEL = Program("scancel", "slurm", "Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]",
                  "signal or cancel jobs", (
    Flag("account", "A", REQUIRED, "account", "act only on jobs charging this account", IGNORE),
    Flag("batch", "b", help="signal batch shell for specified job", does=IGNORE),
    Flag("ctld", help="send request directly to slurmctld (always here)", does=IGNORE),
    Flag("full", "f", help="signal batch shell and all steps for specified job", does=IGNORE),
    Flag("hurry", "H", help="avoid burst buffer stage out", does=IGNORE),
    Flag("interactive", "i", help="require response from user for each job"),
    Flag("me", help="cancel jobs of the current user"),
    _CLUSTERS,
    Flag("name", "n", REQUIRED, "job_name", "act only on jobs with this name"),
    Flag("jobname", "", REQUIRED, "job_name", "same as --name"),
    Flag("partition", "p", REQUIRED, "partition", "act only on jobs in this partition", complete="queues"),
    Flag("quiet", "Q", help="disable warnings"),
    Flag("qos", "q", REQUIRED, "qos", "act only on jobs with this quality of service", IGNORE),
    Flag("reservation", "R", REQUIRED, "reservation", "act only on jobs with this reservation"),
    Flag("sibling", "", REQUIRED, "cluster_name", "remove an active sibling job from a federated job"),
    Flag("signal", "s", REQUIRED, "name | integer", "signal to send to job, default is SIGKILL",
         complete=("KILL", "TERM", "INT", "HUP", "USR1", "USR2", "STOP", "CONT")),
    Flag("state", "t", REQUIRED, "states", "act only on jobs in this state.  Valid job states are PENDING, "
         "RUNNING and SUSPENDED", complete=("PENDING", "RUNNING", "SUSPENDED")),
    Flag("user", "u", REQUIRED, "user_name", "act only on jobs of this user", complete="users"),
    Flag("verbose", "v", help="verbosity level", does=IGNORE),
    Flag("wckey", "", REQUIRED, "wckey", "act only on jobs with this workload charactization key", IGNORE),
    Flag("nodelist", "w", REQUIRED, "hosts", "act only on jobs on these nodes", complete="hosts"),
    Flag("help", help="show this help message"), Flag("usage", help="display brief usage message"),
    Flag("version", "V", help="output version information and exit"),
), operand="job_id", complete="jobs")

SSTAT = Program("sstat", "slurm", "Usage: sstat [options] -j <job(.stepid)>",
                "display the resource usage of running jobs", (
    Flag("allsteps", "a", help="print all steps for the given job(s) when no step is specified"),
    Flag("format", "o", REQUIRED, "field_list", "comma separated list of fields (use \"--helpformat\" for a list)"),
    Flag("fields", "", REQUIRED, "field_list", "same as --format"),
    Flag("helpformat", "e", help="print a list of fields that can be specified with the '--format' option"),
    Flag("jobs", "j", REQUIRED, "job(.step)", "comma separated list of jobs or job steps", complete="jobs"),
    Flag("noheader", "n", help="no header will be added to the beginning of output"),
    Flag("noconvert", help="don't convert units from their original type (e.g. 2048M won't be converted to 2G)"),
    Flag("parsable", "p", help="output will be '|' delimited with a '|' at the end"),
    Flag("parsable2", "P", help="output will be '|' delimited without a '|' at the end"),
    Flag("pidformat", "i", help="predefined format to list the pids running for each job step", does=IGNORE),
    Flag("verbose", "v", help="primarily for debugging purposes", does=IGNORE),
    Flag("help", "h", help="print this description of use"), Flag("usage", help="display a command usage summary"),
    Flag("version", "V", help="print version"),
), operand="job", complete="jobs")

SPRIO = Program("sprio", "slurm", "Usage: sprio [OPTIONS]", "view the factors that comprise a job's scheduling "
                "priority", (
    Flag("noheader", "h", help="no headers on output"),
    Flag("jobs", "j", REQUIRED, "job_number", "comma separated list of jobs to view", complete="jobs"),
    Flag("long", "l", help="long report"),
    Flag("norm", "n", help="display normalized values"),
    Flag("format", "o", REQUIRED, "format", "format specification"),
    Flag("partition", "p", REQUIRED, "partition", "comma separated list of partitions to view", complete="queues"),
    Flag("user", "u", REQUIRED, "user_name", "comma separated list of users to view", complete="users"),
    Flag("weights", "w", help="show the weights for each priority factor"),
    _CLUSTERS, Flag("sort", "S", REQUIRED, "fields", "comma separated list of fields to sort on", IGNORE),
    Flag("verbose", "v", help="display more information", does=IGNORE),
    Flag("help", help="show this help message"), Flag("usage", help="display a brief summary of sprio options"),
    Flag("version", "V", help="output version information and exit"),
))

SSHARE = Program("sshare", "slurm", "Usage: sshare [OPTION]", "list the shares of associations (fair share here)", (
    Flag("all", "a", help="list all users"),
    Flag("accounts", "A", REQUIRED, "accounts", "display specific accounts (comma separated list)"),
    Flag("users", "u", REQUIRED, "users", "display specific users (comma separated list)", complete="users"),
    Flag("long", "l", help="include normalized usage in output"),
    Flag("parsable", "p", help="'|' delimited output with a trailing '|'"),
    Flag("parsable2", "P", help="'|' delimited output without a trailing '|'"),
    Flag("noheader", "n", help="omit header from output"),
    _CLUSTERS, Flag("verbose", "v", help="display more information", does=IGNORE),
    Flag("help", "h", help="print this description of use"), Flag("usage", help="display a brief usage summary"),
    Flag("version", "V", help="print version information"),
))

SATTACH = Program("sattach", "slurm", "Usage: sattach [options] <jobid.stepid>",
                  "attach to a job step's terminal (a job started with a terminal here)", (
    Flag("pty", help="put this terminal in raw mode, as for a pseudo-terminal"),
    Flag("quiet", "Q", help="quiet mode (suppress informational messages)"),
    Flag("label", "l", help="prepend task number to lines of stdout & stderr"),
    Flag("layout", help="print task layout info and exit (do not attach to tasks)"),
    Flag("input-filter", "", REQUIRED, "taskid", "send stdin to only the specified task"),
    Flag("output-filter", "", REQUIRED, "taskid", "only print stdout from the specified task"),
    Flag("error-filter", "", REQUIRED, "taskid", "only print stderr from the specified task"),
    Flag("verbose", "v", help="verbose mode (multiple -v's increase verbosity)", does=IGNORE),
    Flag("help", "h", help="show this help message"), Flag("usage", "u", help="display brief usage message"),
    Flag("version", "V", help="output version information and exit"),
), operand="jobid.stepid", complete="jobs",
    refused={n: "not offered: the job has one terminal, attached whole"
             for n in ("label", "layout", "input-filter", "output-filter", "error-filter")})

SEFF = Program("seff", "slurm", "Usage: seff [Options] <Jobid>", "the CPU and memory efficiency of a finished job", (
    Flag("h", help="help menu"), Flag("v", help="version"), Flag("d", help="debug mode: display raw Slurm data",
                                                                   does=IGNORE),
), operand="Jobid", complete="jobs", single_dash=True)

#: srun's own options (beside sbatch's job options).
SRUN_OWN = (
    Flag("accel-bind", "", REQUIRED, "type", "bind tasks to closest accelerators", IGNORE),
    Flag("cpu-bind", "", REQUIRED, "type", "bind tasks to CPUs", IGNORE),
    Flag("cpu-freq", "", REQUIRED, "min[-max[:gov]]", "requested cpu frequency (and governor)", IGNORE),
    Flag("disable-status", "X", help="disable ctrl-c status feature", does=IGNORE),
    Flag("distribution", "m", REQUIRED, "type", "distribution method for processes to nodes", IGNORE),
    Flag("error", "e", REQUIRED, "err", "location of stderr redirection"),
    Flag("exact", help="use only the resources requested for the step", does=IGNORE),
    Flag("het-group", "", REQUIRED, "value", "hetjob component allocation(s) in which to launch application"),
    Flag("hint", "", REQUIRED, "hint", "bind tasks according to application hints", IGNORE),
    Flag("immediate", "I", OPTIONAL, "secs", "exit if resources not available in \"secs\"", IGNORE),
    Flag("input", "i", REQUIRED, "in", "location of stdin redirection"),
    Flag("jobid", "", REQUIRED, "id", "run under already allocated job"),
    Flag("kill-on-bad-exit", "K", OPTIONAL, "0|1", "kill the job if any task terminates with a non-zero exit code",
         IGNORE),
    Flag("label", "l", help="prepend task number to lines of stdout/err"),
    Flag("mem-bind", "", REQUIRED, "type", "bind memory to locality domains", IGNORE),
    Flag("mpi", "", REQUIRED, "type", "type of MPI being used", IGNORE),
    Flag("multi-prog", help="if set the program name specified is the configuration specification for multiple "
         "programs"),
    Flag("no-kill", "k", OPTIONAL, "on|off", "do not kill job on node failure", IGNORE),
    Flag("open-mode", "", REQUIRED, "append|truncate", "output file open mode", complete=("append", "truncate")),
    Flag("output", "o", REQUIRED, "out", "location of stdout redirection"),
    Flag("overcommit", "O", help="overcommit resources", does=IGNORE),
    Flag("overlap", help="allow other steps to overlap this step", does=IGNORE),
    Flag("oversubscribe", "s", help="over-subscribe resources with other jobs", does=IGNORE),
    Flag("preserve-env", "E", help="env vars for node and task counts override command-line flags", does=IGNORE),
    Flag("propagate", "", OPTIONAL, "rlimits", "propagate all [or specific list of] rlimits", IGNORE),
    Flag("pty", "", OPTIONAL, "fd", "run task zero in pseudo terminal"),
    Flag("quiet", "Q", help="quiet mode (suppress informational messages)"),
    Flag("relative", "r", REQUIRED, "n", "run job step relative to node n of allocation"),
    Flag("send-libs", "", OPTIONAL, "yes|no", "autodetect and broadcast shared objects", IGNORE),
    Flag("slurmd-debug", "", REQUIRED, "level", "slurmd debug level", IGNORE),
    Flag("task-epilog", "", REQUIRED, "program", "run \"program\" after launching task", IGNORE),
    Flag("task-prolog", "", REQUIRED, "program", "run \"program\" before launching task", IGNORE),
    Flag("threads", "T", REQUIRED, "threads", "set srun launch fanout", IGNORE),
    Flag("tres-per-task", "", REQUIRED, "list", "list of tres required per task", IGNORE),
    Flag("unbuffered", "u", help="do not line-buffer stdout/err", does=IGNORE),
    Flag("verbose", "v", help="verbose mode (multiple -v's increase verbosity)", does=IGNORE),
    Flag("wait", "W", REQUIRED, "sec", "seconds to wait after first task exits before killing job", IGNORE),
    Flag("whole", help="use whole nodes for the step", does=IGNORE),
    *_HELP,
)
#: sbatch's letters srun gives to its own options instead.
SRUN_DROPPED = ("o", "e", "a")

SALLOC_OWN = (
    Flag("bell", help="ring the terminal bell when the job is allocated", does=IGNORE),
    Flag("get-user-env", "", OPTIONAL, "secs", "used by Moab. See srun man page.", KEEP),
    Flag("immediate", "I", OPTIONAL, "secs", "exit if resources not available in \"secs\"", IGNORE),
    Flag("kill-command", "K", OPTIONAL, "signal", "signal to send terminating job", IGNORE),
    Flag("no-bell", help="do NOT ring the terminal bell", does=IGNORE),
    Flag("no-kill", "k", OPTIONAL, "on|off", "do not kill job on node failure", IGNORE),
    Flag("no-shell", help="immediately exit after allocating resources, without running a command"),
    Flag("overcommit", "O", help="overcommit resources", does=IGNORE),
    Flag("oversubscribe", "s", help="over-subscribe resources with other jobs", does=IGNORE),
    Flag("quiet", "Q", help="quiet mode (suppress informational messages)"),
    Flag("verbose", "v", help="verbose mode (multiple -v's increase verbosity)", does=IGNORE),
    Flag("wait-all-nodes", "", REQUIRED, "0|1", "wait for all nodes to be allocated", IGNORE),
    *_HELP,
)


def own_names(rows) -> tuple[dict[str, int], dict[str, str]]:
    """getopt's names for a program's own rows (``EXTRA`` and ``SHORTS`` of srun and salloc)."""
    return {f.name: f.takes for f in rows}, {f.short: f.name for f in rows if f.short}


#: Help lines for sbatch's job options (its table says how each is taken and what it does here):
#: name -> (metavar, text), in sbatch --help's words.
JOB_HELP = {
    "account": ("name", "charge job to specified account"),
    "acctg-freq": ("<datatype>=<interval>", "accounting and profiling sampling intervals"),
    "array": ("indexes", "job array index values"),
    "batch": ("features", "features required on the batch host"),
    "bb": ("<spec>", "burst buffer specifications"),
    "bbf": ("<file_name>", "burst buffer specification file"),
    "begin": ("time", "defer job until HH:MM MM/DD/YY"),
    "chdir": ("directory", "set working directory for batch script"),
    "cluster-constraint": ("[!]list", "specify a list of cluster constraints"),
    "clusters": ("names", "comma separated list of clusters to issue commands to"),
    "comment": ("name", "arbitrary comment"),
    "constraint": ("list", "specify a list of constraints"),
    "container": ("path", "path to OCI container bundle"),
    "container-id": ("id", "OCI container ID"),
    "contiguous": ("", "demand a contiguous range of nodes"),
    "core-spec": ("cores", "count of reserved cores"),
    "cores-per-socket": ("C", "number of cores per socket to allocate"),
    "cpu-freq": ("min[-max[:gov]]", "requested cpu frequency (and governor)"),
    "cpus-per-gpu": ("n", "number of CPUs required per allocated GPU"),
    "cpus-per-task": ("ncpus", "number of cpus required per task"),
    "deadline": ("time", "remove the job if no ending possible before this deadline"),
    "delay-boot": ("mins", "delay boot for desired node features"),
    "dependency": ("type:jobid[:time]", "defer job until condition on jobid is satisfied"),
    "distribution": ("type", "distribution method for processes to nodes"),
    "error": ("err", "file for batch script's standard error"),
    "exclude": ("hosts...", "exclude a specific list of hosts"),
    "exclusive": ("user|mcs", "allocate nodes in exclusive mode when cpu consumable resource is enabled"),
    "export": ("names", "specify environment variables to export"),
    "export-file": ("file|fd", "specify environment variables file or file descriptor to export"),
    "extra": ("string", "arbitrary string for node selection"),
    "extra-node-info": ("S[:C[:T]]", "combine request of sockets per node, cores per socket and threads per core"),
    "get-user-env": ("", "load environment from local cluster"),
    "gid": ("group_id", "group ID to run job as (user root only)"),
    "gpu-bind": ("...", "task to gpu binding options"),
    "gpu-freq": ("...", "frequency and voltage of GPUs"),
    "gpus": ("n", "count of GPUs required for the job"),
    "gpus-per-node": ("n", "number of GPUs required per allocated node"),
    "gpus-per-socket": ("n", "number of GPUs required per allocated socket"),
    "gpus-per-task": ("n", "number of GPUs required per spawned task"),
    "gres": ("list", "required generic resources"),
    "gres-flags": ("opts", "flags related to GRES management"),
    "help": ("", "show this help message"),
    "hint": ("", "bind tasks according to application hints"),
    "hold": ("", "submit job in held state"),
    "ignore-pbs": ("", "ignore #PBS and #BSUB options in the batch script"),
    "input": ("in", "file for batch script's standard input"),
    "job-name": ("jobname", "name of job"),
    "kill-on-invalid-dep": ("<yes|no>", "terminate job if invalid dependency"),
    "licenses": ("names", "required license, comma separated"),
    "mail-type": ("type", "notify on state change: BEGIN, END, FAIL or ALL"),
    "mail-user": ("user", "who to send email notification for job state changes"),
    "mcs-label": ("mcs", "mcs label if mcs plugin mcs/group is used"),
    "mem": ("MB", "minimum amount of real memory"),
    "mem-bind": ("type", "bind memory to locality domains"),
    "mem-per-cpu": ("MB", "maximum amount of real memory per allocated cpu required by the job"),
    "mem-per-gpu": ("n", "real memory required per allocated GPU"),
    "mincpus": ("n", "minimum number of logical processors (threads) per node"),
    "network": ("type", "specify information pertaining to the switch or network"),
    "nice": ("value", "decrease scheduling priority by value"),
    "no-kill": ("", "do not kill job on node failure"),
    "no-requeue": ("", "if set, do not permit the job to be requeued"),
    "nodefile": ("filename", "request a specific list of hosts"),
    "nodelist": ("hosts...", "request a specific list of hosts"),
    "nodes": ("N", "number of nodes on which to run (N = min[-max])"),
    "ntasks": ("ntasks", "number of tasks to run"),
    "ntasks-per-core": ("n", "number of tasks to invoke on each core"),
    "ntasks-per-gpu": ("n", "number of tasks to invoke for each GPU"),
    "ntasks-per-node": ("n", "number of tasks to invoke on each node"),
    "ntasks-per-socket": ("n", "number of tasks to invoke on each socket"),
    "open-mode": ("{append|truncate}", "output file open mode"),
    "output": ("out", "file for batch script's standard output"),
    "overcommit": ("", "overcommit resources"),
    "oversubscribe": ("", "over subscribe resources with other jobs"),
    "parsable": ("", "outputs only the jobid and cluster name (if present), separated by semicolon, only on "
                     "successful submission."),
    "partition": ("partition", "partition requested"),
    "power": ("flags", "power management options"),
    "prefer": ("list", "features desired but not required by job"),
    "priority": ("value", "set the priority of the job to value"),
    "profile": ("value", "enable acct_gather_profile for detailed data value is all or none or any combination of "
                         "energy, lustre, network or task"),
    "propagate": ("rlimits", "propagate all [or specific list of] rlimits"),
    "qos": ("qos", "quality of service"),
    "quiet": ("", "quiet mode (suppress informational messages)"),
    "reboot": ("", "reboot compute nodes before starting job"),
    "requeue": ("", "if set, permit the job to be requeued"),
    "reservation": ("name", "allocate resources from named reservation"),
    "signal": ("[[R][B]:]num[@time]", "send signal when time limit within time seconds"),
    "sockets-per-node": ("S", "number of sockets per node to allocate"),
    "spread-job": ("", "spread job across as many nodes as possible"),
    "switches": ("max-switches{@max-time-to-wait}", "optimum switches and max time to wait for optimum"),
    "tasks-per-node": ("n", "same as --ntasks-per-node"),
    "test-only": ("", "validate batch script but do not submit"),
    "thread-spec": ("threads", "count of reserved threads"),
    "threads-per-core": ("T", "number of threads per core to allocate"),
    "time": ("minutes", "time limit"),
    "time-min": ("minutes", "minimum time limit (if distinct)"),
    "tmp": ("MB", "minimum amount of temporary disk"),
    "tres-per-task": ("list", "list of tres required per task"),
    "uid": ("user_id", "user ID to run job as (user root only)"),
    "usage": ("", "display brief usage message"),
    "use-min-nodes": ("", "if a range of node counts is given, prefer the smaller count"),
    "verbose": ("", "verbose mode (multiple -v's increase verbosity)"),
    "version": ("", "output version information and exit"),
    "wait": ("", "wait for completion of submitted job"),
    "wait-all-nodes": ("0|1", "wait for all nodes to be allocated"),
    "wckey": ("wckey", "wckey to run job under"),
    "wrap": ("command string", "wrap command string in a sh script and submit"),
}
#: What a shell offers for a job option's value.
JOB_COMPLETE = {"partition": "queues", "nodelist": "hosts", "exclude": "hosts", "dependency": "jobs",
                "output": "file", "error": "file", "chdir": "dir", "open-mode": ("append", "truncate"),
                "mail-type": ("NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
                              "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS"),
                "account": None}


def _job_flags(rows) -> list[Flag]:
    """sbatch's rows (:mod:`xce.compat.slurm.options`) as help rows: its table says what each does."""
    from xce.compat.slurm import options as o

    out = []
    for row in rows:
        metavar, text = JOB_HELP.get(row.name, ("", ""))
        does = {o.HONOUR: HONOUR, o.OWN: HONOUR, o.KEEP: KEEP, o.REFUSE: REFUSE}[row.does]
        if row.does == o.REFUSE:
            text = f"{text} (refused here: {row.how})"
            does = HONOUR
        out.append(Flag(row.name, row.short, row.takes, metavar, text, does, JOB_COMPLETE.get(row.name)))
    return out


def sbatch() -> Program:
    from xce.compat.slurm.options import SBATCH_OPTIONS

    return Program("sbatch", "slurm", "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]",
                   "submit a batch script", _job_flags(SBATCH_OPTIONS), operand="script", complete="file")


def _alloc_program(name: str, usage: str, summary: str, own, dropped=()) -> Program:
    from xce.compat.slurm.options import SBATCH_ONLY, SBATCH_OPTIONS

    names = {f.name for f in own}
    job = [f for f in _job_flags(o for o in SBATCH_OPTIONS if o.name not in SBATCH_ONLY and o.name not in names)]
    letters = {f.short for f in own}
    for f in job:
        if f.short in dropped or f.short in letters:
            f.short = ""
    return Program(name, "slurm", usage, summary, sorted([*job, *own], key=lambda f: f.name.lower()),
                   operand="executable", complete="file")


def srun() -> Program:
    return _alloc_program("srun", "Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]] [ : [OPTIONS(N)...]] "
                       "executable(N) [args(N)...]", "run a parallel job", SRUN_OWN, SRUN_DROPPED)


def salloc() -> Program:
    return _alloc_program("salloc", "Usage: salloc [OPTIONS(0)...] [ : [OPTIONS(N)...]] [command(0) [args(0)...]]",
                       "obtain a job allocation and run a command in it", SALLOC_OWN)


def show_help(name: str, asked: set[str], refused: dict[str, str] | None = None) -> None:
    """``--help`` (every option, ``refused`` marked so) or ``--usage`` (the usage line) on standard output."""
    import sys

    table = program(name, refused)
    sys.stdout.write(table.help_text() if "help" in asked else table.usage + "\n")


def program(name: str, refused: dict[str, str] | None = None) -> Program:
    """The declaration of one Slurm front-end, with the reasons its parser refuses options."""
    table = BUILT[name]() if name in BUILT else STATIC[name]
    table.refused.update(refused or {})
    return table


STATIC = {"squeue": SQUEUE, "sacct": SACCT, "sinfo": SINFO, "scontrol": SCONTROL, "scancel": SCANCEL, "sstat": SSTAT,
          "sprio": SPRIO, "sshare": SSHARE, "sattach": SATTACH, "seff": SEFF}
BUILT = {"sbatch": sbatch, "srun": srun, "salloc": salloc}
