"""The LSF front-ends' options, one table each: their parsers read the flags and valued options
from them, ``-h`` prints them, ``man`` and shell completion are made from them
(:mod:`xce.compat.optable`). The usage lines stay each program's ``USAGE`` (what a usage error
prints, as LSF prints it); ``-h`` adds the option list. bsub's rows are
:mod:`xce.compat.lsf.options` (what each does here), with the help lines of :data:`BSUB_HELP`.
"""

from __future__ import annotations

from xce.compat.optable import HONOUR, IGNORE, KEEP, REFUSE, REQUIRED, Flag, Program


def _f(name: str, help: str, does: str = HONOUR, complete=None) -> Flag:
    return Flag(name, help=help, does=does, complete=complete)


def _v(name: str, metavar: str, help: str, does: str = HONOUR, complete=None) -> Flag:
    return Flag(name, takes=REQUIRED, metavar=metavar, help=help, does=does, complete=complete)


_SELECT = (_v("J", "job_name", "only the jobs with this name"),
           _v("q", "queue_name", "only the jobs in this queue", complete="queues"),
           _v("u", "user_name", "only the jobs of this user (all: every user)", complete="users"))
_P = "program"  # what a Program's usage is read from: the module's USAGE


def _p(name: str, summary: str, flags, **kw) -> Program:
    return Program(name, "lsf", "", summary, flags, **kw)


BJOBS = _p("bjobs", "displays and filters information about LSF jobs", (
    _f("a", "all jobs: unfinished and recently finished"),
    _f("d", "only recently finished jobs"),
    _f("p", "only pending jobs, with their pending reasons"),
    _f("r", "only running jobs"),
    _f("s", "only suspended jobs"),
    _f("w", "wide format: fields are not truncated"),
    _f("l", "long format: every detail of each job"),
    _f("noheader", "no header line"),
    _f("json", "JSON output (with -o)"),
    _f("UF", "long format without line wrapping", IGNORE),
    _f("X", "hosts not grouped by host group", IGNORE),
    _f("W", "start and end times in full", IGNORE),
    _f("hms", "times as hh:mm:ss", IGNORE),
    _f("A", "array summaries", REFUSE),
    _f("sum", "a summary of job counts", REFUSE),
    _f("x", "only jobs with exceptions", IGNORE),
    _f("N", "CPU times normalised to a host", REFUSE),
    _f("aps", "APS order", REFUSE),
    _f("pe", "only pending jobs that are eligible", IGNORE),
    _f("pi", "only pending jobs that are ineligible", IGNORE),
    _f("psum", "a summary of pending reasons", IGNORE),
    _v("o", "\"field ... [delimiter='c']\"", "customized output: fields, widths and a delimiter"),
    _v("J", "job_name", "only the jobs with this name"),
    _v("q", "queue_name", "only the jobs in this queue", complete="queues"),
    _v("u", "user_name", "only the jobs of this user (all: every user)", complete="users"),
    _v("m", "host_name", "only the jobs running on this host", complete="hosts"),
    _v("P", "project_name", "only the jobs of this project"),
    _v("G", "user_group", "only the jobs of this user group", IGNORE),
    _v("g", "job_group", "only the jobs of this job group", IGNORE),
    _v("app", "application_profile", "only the jobs of this application profile", IGNORE),
    _v("sla", "service_class_name", "only the jobs of this service class", IGNORE),
    _v("Lp", "license_project", "only the jobs of this license project", REFUSE),
    _v("U", "reservation_id", "only the jobs of this advance reservation", REFUSE),
), operand="jobId", complete="jobs")

BKILL = _p("bkill", "sends signals to kill, suspend, or resume unfinished jobs", (
    _f("l", "list the signal names"),
    _f("r", "remove the job at once", IGNORE),
    _f("b", "kill many jobs at once", IGNORE),
    _f("d", "kill and record as DONE", IGNORE),
    _f("stat", "only the jobs in a given state", IGNORE),
    _v("s", "signal", "send this signal (a number or a name such as KILL, TERM, USR1) instead of killing",
       complete=("KILL", "TERM", "INT", "HUP", "USR1", "USR2", "STOP", "CONT")),
    *_SELECT,
    _v("m", "host_name", "only the jobs on this host", REFUSE, complete="hosts"),
    _v("g", "job_group", "only the jobs of this job group", IGNORE),
    _v("sla", "service_class_name", "only the jobs of this service class", IGNORE),
    _v("app", "application_profile", "only the jobs of this application profile", IGNORE),
    _v("C", "reason", "a reason recorded with the kill", IGNORE),
), operand="jobId", complete="jobs", notes="Job 0 means every job the selection names.")

BSTOP = _p("bstop", "suspends unfinished jobs", _SELECT, operand="jobId", complete="jobs",
           notes="A pending job is held (PSUSP). Job 0 means every job the selection names.")
BRESUME = _p("bresume", "resumes suspended jobs", _SELECT, operand="jobId", complete="jobs",
             notes="A held pending job is released. Job 0 means every job the selection names.")
BREQUEUE = _p("brequeue", "kills and requeues a job", (
    _f("a", "requeue the jobs in any state", IGNORE),
    _f("d", "requeue only finished DONE jobs", IGNORE),
    _f("e", "requeue only finished EXIT jobs", IGNORE),
    _f("r", "requeue only running jobs", IGNORE),
    _f("H", "requeue the job held (PSUSP)"),
    *_SELECT,
), operand="jobId", complete="jobs")

BMOD = _p("bmod", "modifies job submission options of a job", (
    _v("q", "\"queue_name ...\"", "move the job to this queue (the first named)", complete="queues"),
    _v("P", "project_name", "change the project"),
    _v("J", "job_name", "change the job name"),
    _v("n", "num_tasks", "change the number of tasks"),
    _v("R", "\"res_req\"", "change the resource requirement"),
    _v("W", "[hour:]minute", "change the run limit"),
    _v("o", "out_file", "change the output file", complete="file"),
    _v("oo", "out_file", "change the output file (overwritten)", complete="file"),
    _v("e", "err_file", "change the error file", complete="file"),
    _v("eo", "err_file", "change the error file (overwritten)", complete="file"),
    _v("b", "[[year:][month:]day:]hour:minute", "change the begin time"),
    _v("w", "\"dependency_expression\"", "change the dependency"),
    _v("sp", "priority", "change the user priority"),
    _v("M", "mem_limit", "change the memory limit"),
    _f("Wn", "remove the run limit"), _f("wn", "remove the dependency"), _f("bn", "remove the begin time"),
    _f("spn", "reset the user priority"), _f("Mn", "remove the memory limit"),
    _f("on", "remove the output file", IGNORE), _f("en", "remove the error file", IGNORE),
    _f("Jn", "reset the job name", IGNORE), _f("Pn", "reset the project", IGNORE),
), operand="jobId", complete="jobs")

BHIST = _p("bhist", "displays historical information about jobs", (
    _f("l", "long format: each job's events"),
    _f("b", "brief format", IGNORE),
    _f("w", "wide format"),
    _f("a", "finished and unfinished jobs"),
    _f("d", "only finished jobs"),
    _f("p", "only pending jobs"),
    _f("r", "only running jobs"),
    _f("s", "only suspended jobs"),
    _f("t", "events in time order", IGNORE),
    _f("aff", "affinity resources (with -l)", IGNORE),
    _f("hostfile", "the user host file (with -l)", IGNORE),
    _f("UF", "long format without line wrapping", IGNORE),
    *_SELECT,
    _v("n", "num_logfiles", "how many event log files to search", IGNORE),
    _v("C", "start_time,end_time", "jobs completed in this period", IGNORE),
    _v("D", "start_time,end_time", "jobs dispatched in this period", IGNORE),
    _v("S", "start_time,end_time", "jobs submitted in this period", IGNORE),
    _v("T", "start_time,end_time", "events in this period", IGNORE),
    _v("m", "host_name", "jobs dispatched to this host", IGNORE, complete="hosts"),
    _v("P", "project_name", "jobs of this project", IGNORE),
    _v("N", "host_name", "CPU times normalised to a host", IGNORE),
    _v("f", "logfile_name", "the event log file to read", IGNORE),
    _v("G", "user_group", "jobs of this user group", IGNORE),
), operand="jobId", complete="jobs")

BACCT = _p("bacct", "displays accounting statistics about finished jobs", (
    _f("b", "brief format", IGNORE),
    _f("l", "long format: each job's accounting"),
    _f("d", "only DONE jobs", IGNORE),
    _f("e", "only EXIT jobs", IGNORE),
    _f("w", "wide format", IGNORE),
    _f("aff", "affinity resources", IGNORE),
    _f("gpu", "GPU usage", IGNORE),
    _f("UF", "long format without line wrapping", IGNORE),
    _f("x", "only jobs with exceptions", IGNORE),
    _v("q", "queue_name", "only the jobs of this queue", complete="queues"),
    _v("P", "project_name", "only the jobs of this project"),
    _v("u", "user_name", "only the jobs of this user (all: every user)", complete="users"),
    _v("C", "time0,time1", "jobs completed in this period", IGNORE),
    _v("D", "time0,time1", "jobs dispatched in this period", IGNORE),
    _v("S", "time0,time1", "jobs submitted in this period", IGNORE),
    _v("m", "host_name", "jobs run on this host", IGNORE, complete="hosts"),
    _v("f", "logfile_name", "the accounting file to read", IGNORE),
    _v("N", "host_name", "CPU times normalised to a host", IGNORE),
    _v("sla", "service_class_name", "jobs of this service class", IGNORE),
    _v("app", "application_profile", "jobs of this application profile", IGNORE),
    _v("g", "job_group", "jobs of this job group", IGNORE),
    _v("G", "user_group", "jobs of this user group", IGNORE),
    _v("U", "reservation_id", "jobs of this advance reservation", IGNORE),
    _v("R", "res_req", "jobs with this resource requirement", IGNORE),
), operand="jobId", complete="jobs")

BQUEUES = _p("bqueues", "displays information about queues", (
    _f("w", "wide format"), _f("l", "long format: every parameter of each queue"),
    _f("r", "fair-share details", IGNORE), _f("alloc", "allocated shares", IGNORE),
    _v("m", "host_name", "only the queues that can use this host", IGNORE, complete="hosts"),
    _v("u", "user_name", "only the queues this user can submit to", IGNORE, complete="users"),
    _v("o", "\"field ...\"", "customized output", IGNORE),
), operand="queue_name", complete="queues")

BHOSTS = _p("bhosts", "displays hosts and their static and dynamic resources", (
    _f("w", "wide format"), _f("l", "long format"), _f("e", "only hosts that have exceptions", IGNORE),
    _f("x", "only hosts in an exception state", IGNORE), _f("X", "hosts not grouped", IGNORE),
    _f("s", "shared resources", IGNORE),
    _v("R", "res_req", "only hosts that satisfy this resource requirement", IGNORE),
    _v("o", "\"field ...\"", "customized output", IGNORE),
), operand="host_name", complete="hosts")

BPARAMS = _p("bparams", "displays information about configurable system parameters",
             (_f("a", "every parameter"), _f("l", "long format")))
LSID = _p("lsid", "displays the LSF version number, the cluster name, and the management host name", ())
LSCLUSTERS = _p("lsclusters", "displays configuration information about LSF clusters",
                (_f("l", "long format"), _f("w", "wide format")), operand="cluster_name")
LSHOSTS = _p("lshosts", "displays hosts and their static resource information", (
    _f("w", "wide format"), _f("l", "long format"), _f("gpu", "GPU information"),
    _f("s", "shared resources"),
    _v("R", "res_req", "only hosts that satisfy this resource requirement"),
), operand="host_name", complete="hosts")
BADMIN = _p("badmin", "administrative tool for LSF (showconf only here)", (), operand="showconf",
            complete=("showconf",), notes="Subcommands: showconf mbd | showconf sbd [host_name ...]")

BPEEK = _p("bpeek", "displays the stdout and stderr output of an unfinished job", (
    _f("f", "follow the output as it is written (tail -f)"),
    _v("q", "queue_name", "the most recent job of yours in this queue", complete="queues"),
    _v("m", "host_name", "the most recent job of yours on this host", complete="hosts"),
    _v("J", "job_name", "the most recent job of yours with this name"),
), operand="job_id", complete="jobs")
LSLOAD = _p("lsload", "displays load information for hosts", (
    _f("w", "wide format"), _f("l", "long format: every load index"),
    _f("N", "normalized CPU run queue lengths", IGNORE), _f("E", "effective CPU run queue lengths", IGNORE),
    _f("x", "only hosts in an exception state", IGNORE), _f("s", "shared resources", REFUSE),
    _v("R", "res_req", "only hosts that satisfy this resource requirement", REFUSE),
    _v("I", "index_list", "only these load indices (r15s:ut:mem ...)"),
    _v("n", "num_hosts", "at most this many hosts"),
), operand="host_name", complete="hosts")

#: bsub's help lines: option (with its dash) -> (metavar, text).
BSUB_HELP = {
    "-a": ("\"esub_application ...\"", "external submission applications"),
    "-alloc_flags": ("\"flags\"", "allocation flags"),
    "-app": ("application_profile_name", "the application profile"),
    "-ar": ("", "the job is autoresizable"),
    "-B": ("", "send mail when the job is dispatched"),
    "-b": ("[[year:][month:]day:]hour:minute", "dispatch the job on or after this time"),
    "-C": ("core_limit", "core file size limit"),
    "-c": ("[hour:]minute[/host_name]", "CPU time limit"),
    "-clusters": ("\"cluster_name ...\"", "clusters the job may run on"),
    "-cn_cu": ("\"cu_string\"", "compute unit requirement of the compute nodes"),
    "-cn_mem": ("mem_size", "memory of the compute nodes"),
    "-core_isolation": ("0|1|2", "core isolation"),
    "-csm": ("y|n", "CSM job"),
    "-cwd": ("\"current_working_directory\"", "the job's working directory"),
    "-D": ("data_limit", "data segment size limit"),
    "-data": ("\"[host_name:]abs_file_path ...\"", "data requirements"),
    "-datachk": ("", "check data files"),
    "-datagrp": ("\"user_group_name\"", "data staging group"),
    "-E": ("\"pre_exec_command [arguments ...]\"", "a pre-execution command"),
    "-Ep": ("\"post_exec_command [arguments ...]\"", "a post-execution command"),
    "-e": ("error_file", "append the job's standard error to this file"),
    "-env": ("\"none\" | \"all [,~var_name[, ~var_name] ...] [var_name=var_value[, var_name=var_value] ...]\"",
             "the environment the job runs with"),
    "-eo": ("error_file", "write the job's standard error to this file, overwritten"),
    "-eptl": ("[hour:]minute", "eligible pending time limit"),
    "-ext": ("\"external_scheduler_options\"", "external scheduler options"),
    "-extsched": ("\"external_scheduler_options\"", "external scheduler options"),
    "-F": ("file_limit", "file size limit"),
    "-f": ("\"local_file operator [remote_file]\" ...", "files to copy"),
    "-freq": ("numberUnit", "CPU frequency"),
    "-G": ("user_group", "the user group for fair share"),
    "-g": ("job_group_name", "the job group"),
    "-gpu": ("- | \"[num=num_gpus[/task | host]] [:mode=shared | exclusive_process] ...\"", "GPU requirements"),
    "-H": ("", "hold the job in the PSUSP state on submission"),
    "-hl": ("", "per-host memory and swap limits"),
    "-hostfile": ("file_path", "a user host file"),
    "-I": ("", "an interactive batch job"),
    "-Ip": ("", "an interactive batch job with a pseudo-terminal"),
    "-IS": ("", "an interactive batch job through ssh"),
    "-ISp": ("", "an interactive batch job with a pseudo-terminal through ssh"),
    "-ISs": ("", "an interactive batch job with a shell-mode pseudo-terminal through ssh"),
    "-Is": ("", "an interactive batch job with a shell-mode pseudo-terminal"),
    "-IX": ("", "an interactive X-window job"),
    "-i": ("input_file", "the job's standard input file"),
    "-is": ("input_file", "the job's standard input file, spooled"),
    "-J": ("job_name | \"job_name[index_list]%job_slot_limit\"", "the job name, or a job array"),
    "-Jd": ("\"job_description\"", "a job description"),
    "-jobaff": ("\"[! | # | ~]attribute_name ...\"", "host attribute affinity"),
    "-jsdl": ("file_name", "a JSDL file"),
    "-jsdl_strict": ("file_name", "a JSDL file, strictly validated"),
    "-jsm": ("y | n | d", "jsrun-managed job"),
    "-K": ("", "wait for the job to complete"),
    "-k": ("\"checkpoint_dir [init=initial_checkpoint_period] [checkpoint_period] [method=method_name]\"",
           "checkpointing"),
    "-L": ("login_shell", "the login shell that initializes the job's environment"),
    "-Lp": ("ls_project_name", "the License Scheduler project"),
    "-ln_mem": ("mem_size", "memory of the launch node"),
    "-ln_slots": ("num_slots", "slots of the launch node"),
    "-M": ("mem_limit[!]", "memory limit"),
    "-m": ("\"host_name[@cluster_name][[!] | +[pref_level]] | host_group[[!] | +[pref_level]] ...\"",
           "run on one of these hosts"),
    "-mig": ("migration_threshold", "migration threshold"),
    "-N": ("", "send the job report by mail when the job finishes"),
    "-Ne": ("", "send the job report by mail only when the job fails"),
    "-n": ("min_tasks[,max_tasks]", "the number of tasks"),
    "-network": ("\"network_res_req\"", "network requirements"),
    "-nnodes": ("num_nodes", "the number of nodes (whole nodes)"),
    "-notify": ("\"[exit ] [done ] [start ] [suspend]\"", "notifications to the application center"),
    "-o": ("output_file", "append the job's standard output to this file"),
    "-oo": ("output_file", "write the job's standard output to this file, overwritten"),
    "-outdir": ("output_directory", "the output directory"),
    "-P": ("project_name", "the project"),
    "-p": ("process_limit", "process limit"),
    "-pack": ("job_submission_file", "submit a job pack"),
    "-ptl": ("[hour:]minute", "pending time limit"),
    "-Q": ("\"[exit_code ...] [EXCLUDE(exit_code ...)]\"", "exit values that requeue the job"),
    "-q": ("\"queue_name ...\"", "the queue (the first named)"),
    "-R": ("\"res_req\" [-R \"res_req\" ...]", "resource requirements"),
    "-r": ("", "the job is rerunnable"),
    "-rcacct": ("\"rc_account_name\"", "resource connector account"),
    "-rn": ("", "the job is not rerunnable"),
    "-rnc": ("resize_notification_cmd", "resize notification command"),
    "-S": ("stack_limit", "stack segment size limit"),
    "-s": ("signal", "signal sent when the job is killed for a limit"),
    "-sla": ("service_class_name", "the service class"),
    "-smt": ("smt_value", "simultaneous multithreading"),
    "-sp": ("priority", "the user-assigned job priority"),
    "-stage": ("\"storage=min_size[:in=path][:out=path]\"", "data staging"),
    "-step_cgroup": ("y | n", "cgroups for job steps"),
    "-T": ("thread_limit", "thread limit"),
    "-t": ("[[[year:]month:]day:]hour:minute", "termination deadline"),
    "-ti": ("", "terminate orphan jobs at once"),
    "-tty": ("", "the job's output to the terminal (with -I)"),
    "-U": ("reservation_ID", "the advance reservation"),
    "-u": ("mail_user", "the mail address for job mail"),
    "-ul": ("", "pass the user's limits to the job"),
    "-user": ("username", "submit on behalf of another user"),
    "-v": ("swap_limit", "total process virtual memory limit"),
    "-W": ("[hour:]minute[/host_name | /host_model]", "run time limit"),
    "-We": ("[hour:]minute[/host_name | /host_model]", "estimated run time"),
    "-w": ("'dependency_expression'", "dependency: done(ID), ended(ID), exit(ID), started(ID) ..."),
    "-wa": ("'signal'", "the signal sent before the run limit is reached"),
    "-wt": ("'[hour:]minute'", "how long before the run limit -wa's signal is sent"),
    "-XF": ("", "X11 forwarding through ssh"),
    "-x": ("", "exclusive use of the hosts"),
    "-Zs": ("", "spool the command file"),
}
BSUB_COMPLETE = {"-q": "queues", "-m": "hosts", "-o": "file", "-oo": "file", "-e": "file", "-eo": "file",
                 "-cwd": "dir", "-u": "users"}


def bsub(usage: str) -> Program:
    from xce.compat.lsf import options as o

    flags = []
    for row in o.BSUB_OPTIONS:
        metavar, text = BSUB_HELP.get(row.name, ("", ""))
        does = {o.HONOUR: HONOUR, o.OWN: HONOUR, o.KEEP: KEEP, o.REFUSE: REFUSE}[row.does]
        if row.does == o.REFUSE:
            text = f"{text} (refused here: {row.how} is not available on this cluster)"
            does = HONOUR
        flags.append(Flag(row.name[1:], takes=REQUIRED if row.takes else 0, metavar=metavar, help=text, does=does,
                          complete=BSUB_COMPLETE.get(row.name)))
    return Program("bsub", "lsf", usage, "submits a job to LSF", flags, operand="command", complete="file")


STATIC = {"bjobs": BJOBS, "bkill": BKILL, "bstop": BSTOP, "bresume": BRESUME, "brequeue": BREQUEUE, "bmod": BMOD,
          "bhist": BHIST, "bacct": BACCT, "bqueues": BQUEUES, "bhosts": BHOSTS, "bparams": BPARAMS, "lsid": LSID,
          "lsclusters": LSCLUSTERS, "lshosts": LSHOSTS, "badmin": BADMIN, "bpeek": BPEEK, "lsload": LSLOAD}


def program(name: str, usage: str) -> Program:
    """One LSF front-end's declaration, with its usage lines (its module's ``USAGE``)."""
    if name == "bsub":
        return bsub(usage)
    table = STATIC[name]
    table.usage = usage
    return table


def with_help(main, prog: str, usage: str):
    """``main`` with LSF's ``-h``: the usage and every option, on standard error, exit 0 (a usage
    error still prints the usage alone)."""
    import sys

    def run(argv: list[str]) -> int:
        if argv[:1] in (["-h"], ["-help"], ["--help"]):
            sys.stderr.write(program(prog, usage).help_text())
            return 0
        return main(argv)

    run.__doc__ = main.__doc__
    return run
