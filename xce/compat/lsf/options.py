"""bsub's options, declared once: how each takes its value and what it does here.

Every option IBM Spectrum LSF 10.1's bsub reference documents is a row. ``bsub``'s command line
and the ``#BSUB`` lines of a job script (``bsub < script``, ``bsub script``, ``xce submit``) go
through this table and one reader (:func:`split`), so an option means the same wherever it is
written. LSF's rules: one dash for every option, long or short (``-alloc_flags``); a value in the
next word or attached to its option (``-n2``, ``-qshort``, ``-R"span[ptile=16]"`` once the shell or
the line's quotes are read). Each row says what the option does on this cluster: ``HONOUR``
(``xce submit`` words), ``KEEP`` (``--record NAME=VALUE``: it cannot matter here), ``REFUSE``
(the reason), or ``OWN`` (bsub's own run: interactive and waiting modes).

A ``#BSUB`` line is read as LSF reads it (``parseLine`` in LSF's ``lsb.sub.c``, kept in openlava):
its words up to one that starts with ``#`` (a comment), then getopt over them, which stops at the
first word that is not an option: that word and the rest of the line are not options and are
ignored, as bsub ignores them, and never the job's command.

Standard library only; the value grammars are :mod:`xce.cli.jobscript`'s.
"""

from __future__ import annotations

from xce.cli import jobscript as js

HONOUR, KEEP, REFUSE, OWN = "honour", "keep", "refuse", "own"


class Option:
    """One row: the name (with its dash), whether it takes a value, what it does, and ``how``:
    the xce words for a value (HONOUR), the record key (KEEP), the reason (REFUSE)."""

    __slots__ = ("name", "takes", "does", "how")

    def __init__(self, name: str, takes: bool, does: str, how=None):
        self.name, self.takes, self.does, self.how = name, takes, does, how

    def words(self, value: str | None) -> list[str]:
        text = "" if value is None else value
        if self.does == HONOUR:
            return self.how(text)
        if self.does == KEEP:
            return ["--record", f"{self.how}={text if self.takes else 'yes'}"]
        if self.does == REFUSE:
            raise js.Refused(f"{self.name}: {self.how} is not available on this cluster")
        return []


def _same(flag: str):
    return lambda v: [flag, v]


def _flag(*words: str):
    return lambda v: list(words)


def _env(v: str) -> list[str]:
    from xce.cli.envcopy import from_lsf

    return ["--env", from_lsf(v)]


def _begin(v: str) -> list[str]:
    return ["-b", js.lsf_time(v)]


_V, _F = True, False
#: bsub's options, alphabetically as LSF's reference lists them.
BSUB_OPTIONS = (
    Option("-a", _V, KEEP, "esub"),
    Option("-alloc_flags", _V, KEEP, "alloc_flags"),
    Option("-app", _V, KEEP, "app"),
    Option("-ar", _F, KEEP, "autoresizable"),
    Option("-B", _F, HONOUR, _flag("--record", "mail_begin=yes")),
    Option("-b", _V, HONOUR, _begin),
    Option("-C", _V, REFUSE, "a core file limit"),
    Option("-c", _V, REFUSE, "a CPU time limit"),
    Option("-clusters", _V, KEEP, "clusters"),
    Option("-cn_cu", _V, KEEP, "cn_cu"),
    Option("-cn_mem", _V, KEEP, "cn_mem"),
    Option("-core_isolation", _V, KEEP, "core_isolation"),
    Option("-csm", _V, REFUSE, "CSM allocations"),
    Option("-cwd", _V, HONOUR, _same("--cwd")),
    Option("-D", _V, REFUSE, "a data segment limit"),
    Option("-data", _V, REFUSE, "data staging"),
    Option("-datachk", _F, KEEP, "datachk"),
    Option("-datagrp", _V, REFUSE, "data staging"),
    Option("-E", _V, REFUSE, "pre-execution commands"),
    Option("-Ep", _V, REFUSE, "post-execution commands"),
    Option("-e", _V, HONOUR, _same("-e")),
    Option("-env", _V, HONOUR, _env),
    Option("-eo", _V, HONOUR, lambda v: ["-e", v, "--open-mode", "truncate"]),
    Option("-eptl", _V, KEEP, "eligible_pending_time_limit"),
    Option("-ext", _V, KEEP, "external_scheduler"),
    Option("-extsched", _V, KEEP, "external_scheduler"),
    Option("-F", _V, REFUSE, "a file size limit"),
    Option("-f", _V, REFUSE, "file transfer"),
    Option("-freq", _V, REFUSE, "CPU frequencies"),
    Option("-G", _V, KEEP, "user_group"),
    Option("-g", _V, KEEP, "job_group"),
    Option("-gpu", _V, HONOUR, js.lsf_gpu),
    Option("-H", _F, HONOUR, _flag("-H")),
    Option("-hl", _F, KEEP, "host_limits"),
    Option("-hostfile", _V, REFUSE, "host files"),
    Option("-I", _F, OWN), Option("-Ip", _F, OWN), Option("-IS", _F, OWN), Option("-ISp", _F, OWN),
    Option("-ISs", _F, OWN), Option("-Is", _F, OWN),
    Option("-IX", _F, REFUSE, "X11 forwarding"),
    Option("-i", _V, REFUSE, "an input file for the job"),
    Option("-is", _V, REFUSE, "an input file for the job"),
    Option("-J", _V, HONOUR, _same("-J")),
    Option("-Jd", _V, KEEP, "job_description"),
    Option("-jobaff", _V, KEEP, "job_affinity"),
    Option("-jsdl", _V, REFUSE, "JSDL files"),
    Option("-jsdl_strict", _V, REFUSE, "JSDL files"),
    Option("-jsm", _V, KEEP, "jsm"),
    Option("-K", _F, OWN),
    Option("-k", _V, REFUSE, "checkpointing"),
    Option("-L", _V, KEEP, "login_shell"),
    Option("-Lp", _V, KEEP, "license_project"),
    Option("-ln_mem", _V, KEEP, "ln_mem"),
    Option("-ln_slots", _V, KEEP, "ln_slots"),
    Option("-M", _V, HONOUR, lambda v: ["--limit", "mem=" + js.lsf_memory(v)]),
    Option("-m", _V, HONOUR, _same("--hosts")),
    Option("-mig", _V, KEEP, "migration_threshold"),
    Option("-N", _F, HONOUR, _flag("--record", "mail_end=yes")),
    Option("-Ne", _F, HONOUR, _flag("--record", "mail_error=yes")),
    Option("-n", _V, HONOUR, lambda v: ["-n", js.lsf_slots(v)]),
    Option("-network", _V, REFUSE, "networks"),
    Option("-nnodes", _V, HONOUR, lambda v: ["--nodes", v, "-x"]),
    Option("-notify", _V, KEEP, "notify"),
    Option("-o", _V, HONOUR, _same("-o")),
    Option("-oo", _V, HONOUR, lambda v: ["-o", v, "--open-mode", "truncate"]),
    Option("-outdir", _V, REFUSE, "output directories"),
    Option("-P", _V, HONOUR, _same("-P")),
    Option("-p", _V, REFUSE, "a process limit"),
    Option("-pack", _V, REFUSE, "job packs"),
    Option("-ptl", _V, KEEP, "pending_time_limit"),
    Option("-Q", _V, REFUSE, "requeue exit values"),
    Option("-q", _V, HONOUR, lambda v: ["-q", v.split()[0] if v.split() else v]),
    Option("-R", _V, HONOUR, lambda v: ["-R", js.lsf_resreq(v)]),
    Option("-r", _F, HONOUR, _flag("--rerunnable")),
    Option("-rcacct", _V, KEEP, "rc_account"),
    Option("-rn", _F, HONOUR, _flag("--no-rerunnable")),
    Option("-rnc", _V, KEEP, "resize_notification"),
    Option("-S", _V, REFUSE, "a stack limit"),
    Option("-s", _V, REFUSE, "a termination signal"),
    Option("-sla", _V, KEEP, "service_class"),
    Option("-smt", _V, KEEP, "smt"),
    Option("-sp", _V, HONOUR, _same("--priority")),
    Option("-stage", _V, REFUSE, "data staging"),
    Option("-step_cgroup", _V, KEEP, "step_cgroup"),
    Option("-T", _V, REFUSE, "a thread limit"),
    Option("-t", _V, REFUSE, "a termination deadline"),
    Option("-ti", _F, REFUSE, "immediate orphan termination"),
    Option("-tty", _F, KEEP, "tty"),
    Option("-U", _V, KEEP, "reservation"),
    Option("-u", _V, HONOUR, _same("--mail-user")),
    Option("-ul", _F, KEEP, "user_limits"),
    Option("-user", _V, REFUSE, "submitting as another user"),
    Option("-v", _V, REFUSE, "a swap limit"),
    Option("-W", _V, HONOUR, _same("-W")),
    Option("-We", _V, KEEP, "estimated_run_time"),
    Option("-w", _V, HONOUR, _same("-w")),
    Option("-wa", _V, HONOUR, _same("--warn-signal")),
    Option("-wt", _V, HONOUR, _same("--warn-time")),
    Option("-XF", _F, REFUSE, "X11 forwarding"),
    Option("-x", _F, HONOUR, _flag("-x")),
    Option("-Zs", _F, REFUSE, "spooling the command file"),
)
BSUB = {o.name: o for o in BSUB_OPTIONS}
#: Valued options, longest first: the one a word with an attached value (``-qshort``) starts with.
_ATTACHED = sorted((o.name for o in BSUB_OPTIONS if o.takes), key=len, reverse=True)


class BadOption(ValueError):
    """A word LSF's parser refuses; the message is bsub's (``illegal option -- z``)."""


def split(argv: list[str]) -> tuple[list[tuple[Option, str | None]], list[str]]:
    """``argv`` as (option, value) pairs, and the words from the first that is not an option on
    (``--`` ends the options and is dropped): bsub's command, or what a ``#BSUB`` line ignores."""
    pairs: list[tuple[Option, str | None]] = []
    i, n = 0, len(argv)
    while i < n:
        word = argv[i]
        if word == "--":
            return pairs, argv[i + 1:]
        if word[:1] != "-" or word == "-":
            return pairs, argv[i:]
        i += 1
        option = BSUB.get(word)
        value = None
        if option is None:  # -n4, -qshort, -R"span[ptile=16]": the value in the same word
            name = next((o for o in _ATTACHED if word.startswith(o)), None)
            if name is None:
                raise BadOption(f"illegal option -- {word[1:2] or word}")
            option, value = BSUB[name], word[len(name):]
        elif option.takes:
            if i >= n:
                raise BadOption(f"option requires an argument -- {word[1:]}")
            value = argv[i]
            i += 1
        pairs.append((option, value))
    return pairs, []


def job_words(pairs: list[tuple[Option, str | None]]) -> list[str]:
    """``xce submit`` words for the pairs (bsub's own options give none); Refused for one that
    cannot be honoured, in the words bsub uses for it."""
    out: list[str] = []
    for option, value in pairs:
        out += option.words(value)
    return out


#: How bsub's interactive options are asked of ``xce submit``.
INTERACTIVE = {"-I": ["-I"], "-Is": ["--pty"], "-Ip": ["--pty"], "-IS": ["--pty"], "-ISs": ["--pty"],
               "-ISp": ["--pty"]}


def directive(words: list[str]) -> list[str]:
    """One ``#BSUB`` line as ``xce submit`` words; from a word that is not an option on, the line
    is ignored, as bsub ignores it."""
    try:
        pairs, _ignored = split(words)
    except BadOption as exc:
        raise js.Refused(str(exc)) from None
    out = job_words(pairs)
    for option, _ in pairs:
        out += INTERACTIVE.get(option.name, [])
    return out
