"""Shell completion for ``xce`` and ``xceadmin``, answered from the command declarations.

``xce completion bash`` (or ``zsh``, ``fish``) prints a script that, on TAB, runs
``xce __complete WORD... CURRENT`` and offers what it prints, one candidate per line. The answer
walks the words with the same declaration the parser uses, so it offers exactly the commands,
options and choices that the command line would accept. ``__files__``/``__dirs__`` as the answer
hands over to the shell's own file-name completion (paths, the command of ``xce submit``).

The bash and zsh scripts complete the LSF and Slurm front-ends too (``sbatch``, ``bjobs`` ...):
``xce __complete-compat PROG WORD... CURRENT`` answers from the program's option table
(:mod:`xce.compat.optable`), the one its parser reads.

Where an option or argument takes a queue (a Slurm partition), a host, a user or a job id
(``complete="queues"`` ...), the candidates are the live cluster's: :func:`values` asks the
controller, for at most :data:`PATIENCE_S`, and offers nothing, silently, when it cannot answer
(``xce __complete-values KIND`` prints them, for a script of one's own).
"""

from __future__ import annotations

import sys

from xce.cli.spec import HELP_FLAGS, Arg, Command, Group, Opt, _looks_negative, path

FILES, DIRS = "__files__", "__dirs__"

BASH = r"""# XCE completion for bash: add to ~/.bashrc:  eval "$(xce completion bash)"
# (xce and xceadmin, and the LSF and Slurm commands of `xce compat path`)
_xce_complete() {
    local IFS=$'\n' cur="${COMP_WORDS[COMP_CWORD]}" out
    out=($("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null))
    case "${out[0]}" in
        __files__) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
        __dirs__) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
        *) COMPREPLY=("${out[@]}") ;;
    esac
}
complete -F _xce_complete xce xceadmin
_xce_compat_complete() {
    local IFS=$'\n' cur="${COMP_WORDS[COMP_CWORD]}" out line="${COMP_LINE:0:COMP_POINT}" before
    local -a words
    IFS=$' \t\n' read -r -a words <<< "$line"
    [[ "$line" == *[[:space:]] ]] && words+=("")
    cur="${words[${#words[@]}-1]}"
    out=($(@XCE@ __complete-compat "${COMP_WORDS[0]##*/}" "${words[@]:1}" 2>/dev/null))
    case "${out[0]}" in
        __files__) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "${cur#*=}")) ;;
        __dirs__) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "${cur#*=}")) ;;
        *) if [[ "$cur" == *=* && "$COMP_WORDBREAKS" == *=* ]]; then before="${cur%%=*}="
               COMPREPLY=("${out[@]#"$before"}")
           else COMPREPLY=("${out[@]}"); fi ;;
    esac
}
complete -F _xce_compat_complete @FRONT_ENDS@
"""

ZSH = r"""#compdef xce xceadmin
# XCE completion for zsh: add to ~/.zshrc:  eval "$(xce completion zsh)"
_xce_complete() {
    local -a out
    out=("${(@f)$(${words[1]} __complete "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)}")
    case "${out[1]}" in
        __files__) _files ;;
        __dirs__) _files -/ ;;
        *) compadd -- "${out[@]}" ;;
    esac
}
compdef _xce_complete xce xceadmin
_xce_compat_complete() {
    local -a out
    out=("${(@f)$(@XCE@ __complete-compat "${words[1]:t}" "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    case "${out[1]}" in
        __files__) _files ;;
        __dirs__) _files -/ ;;
        *) compadd -- "${out[@]}" ;;
    esac
}
compdef _xce_compat_complete @FRONT_ENDS@
"""

FISH = r"""# XCE completion for fish: xce completion fish > ~/.config/fish/completions/xce.fish
function __xce_complete
    set -l words (commandline -opc)
    set -l out (command $words[1] __complete $words[2..-1] (commandline -ct) 2>/dev/null)
    switch "$out[1]"
        case __files__ __dirs__
            __fish_complete_path (commandline -ct)
        case '*'
            printf '%s\n' $out
    end
end
complete -c xce -f -a '(__xce_complete)'
complete -c xceadmin -f -a '(__xce_complete)'
"""

SCRIPTS = {"bash": BASH, "zsh": ZSH, "fish": FISH}


def _xce_command() -> str:
    """How the front-ends' completion runs xce: this installation's, whatever PATH holds then."""
    import os
    import shlex

    here = os.path.join(os.path.dirname(sys.executable), "xce")
    return shlex.quote(here) if os.access(here, os.X_OK) else "xce"


def script(shell: str) -> None:
    from xce.compat.programs import PROGRAMS

    sys.stdout.write(SCRIPTS[shell].replace("@XCE@", _xce_command()).replace("@FRONT_ENDS@", " ".join(PROGRAMS)))


#: The values a shell may offer from the live cluster, and the longest it waits for them.
LIVE = ("jobs", "queues", "hosts", "users")
PATIENCE_S = 2.0


def _ask(kind: str) -> list[str]:
    from xce.cli import client as cli

    cli.RETRY_S = 0.0  # a TAB is not worth waiting for a controller that is away
    c = cli.connect()
    if kind == "queues":
        return [q["name"] for q in c.get("/v1/queues")["queues"]]
    if kind == "hosts":
        return [h["name"] for h in c.get("/v1/hosts")["hosts"]]
    if kind == "users":
        import getpass

        jobs = c.get("/v1/jobs", user="all", limit=10_000)["jobs"]
        return sorted({getpass.getuser(), *(j["user"] for j in jobs)})
    jobs = c.get("/v1/jobs", limit=10_000)["jobs"]  # the caller's unfinished jobs, as `xce jobs` lists them
    return list(dict.fromkeys(str(j["jobid"]) for j in jobs))


def values(kind: str) -> list[str]:
    """The live cluster's queues, hosts, users or the caller's unfinished job ids; nothing when the
    controller cannot say within :data:`PATIENCE_S` (completion must never hang or print an error)."""
    import io
    import signal

    def give_up(*_):
        raise TimeoutError

    old = signal.signal(signal.SIGALRM, give_up)
    signal.setitimer(signal.ITIMER_REAL, PATIENCE_S)
    err, sys.stderr = sys.stderr, io.StringIO()
    try:
        return _ask(kind)
    except (Exception, SystemExit):
        return []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        sys.stderr = err


def print_values(words: list[str]) -> int:
    """``xce __complete-values KIND``: one value a line."""
    if len(words) != 1 or words[0] not in LIVE:
        sys.stderr.write(f"usage: xce __complete-values {{{'|'.join(LIVE)}}}\n")
        return 2
    for v in values(words[0]):
        sys.stdout.write(v + "\n")
    return 0


def _kind(complete, kind, choices) -> list[str]:
    if choices:
        return [str(c) for c in choices]
    if complete == "dir":
        return [DIRS]
    if complete == "file" or kind is path:
        return [FILES]
    if complete in LIVE:
        return values(complete)
    if isinstance(complete, (tuple, list)):
        return list(complete)
    return []


def _filter(words: list[str], current: str) -> list[str]:
    if words[:1] in ([FILES], [DIRS]):
        return words
    return [w for w in words if w.startswith(current)]


def candidates(root: Group, done: list[str], current: str) -> list[str]:
    """What may come next after the words ``done`` when the word being typed is ``current``."""
    node: Group | Command = root
    i = 0
    while isinstance(node, Group):
        if i == len(done):
            names = [n for n, c in node.children().items() if not c.hidden]
            return _filter(names + (list(HELP_FLAGS) if current.startswith("-") else []), current)
        nxt = node.child(done[i]) if not done[i].startswith("-") else None
        if nxt is None:
            return []
        node, i = nxt, i + 1
    cmd = node
    used: set[int] = set()
    positional = 0
    options_done = False
    words = done[i:]
    j = 0
    while j < len(words):
        word = words[j]
        j += 1
        if options_done or word == "-" or not word.startswith("-") or _looks_negative(word):
            positional += 1
            options_done = options_done or not cmd.interspersed
            continue
        if word == "--":
            options_done = True
            continue
        flag = word.partition("=")[0] if word.startswith("--") else word[:2]
        opt = cmd._by_flag.get(flag)
        if opt is None:
            continue
        used.add(id(opt))
        takes_value = not opt.is_flag and "=" not in word and (word.startswith("--") or len(word) == 2)
        if takes_value:
            if j == len(words):  # the word being typed is this option's value
                return _filter(_kind(opt.complete, opt.type, opt.choices), current)
            j += 1
    if current.startswith("-") and not options_done:
        flags: list[str] = []
        for o in cmd.options:
            if o.hidden or (id(o) in used and not o.multiple):
                continue
            flags += [f for f in (*o.flags, *o.negate) if f.startswith("--")] or list(o.flags)
        flags += cmd.help_flags[1:]
        return _filter(flags, current)
    args = cmd.args
    if options_done and not cmd.interspersed and positional >= 1 and args and args[-1].many:
        return [FILES]
    if positional < len(args) or (args and args[-1].many):
        arg: Arg = args[min(positional, len(args) - 1)]
        return _filter(_kind(arg.complete, arg.type, arg.choices), current)
    return []


def answer(root: Group, words: list[str]) -> int:
    *done, current = words or [""]
    for word in candidates(root, done, current):
        sys.stdout.write(word + "\n")
    return 0


def front_end_candidates(prog: str, done: list[str], current: str) -> list[str]:
    """What may come next on a front-end's command line (its option table; getopt's rules for
    Slurm, one dash per option for LSF), after the words ``done``."""
    from xce.compat.manual import of
    from xce.compat.optable import NONE, REQUIRED

    try:
        table = of(prog)
    except KeyError:
        return []
    slurm = not table.single_dash  # getopt's rules, else one dash per option
    longs = {f.name: f for f in table.flags}
    shorts = {f.short: f for f in table.flags if f.short}
    stop = prog in ("sbatch", "srun", "salloc", "bsub")  # the first operand is the script or command
    pending = None  # the option whose value the next word is
    operands: list[str] = []
    for word in done:
        if pending is not None:
            pending = None
            continue
        if word == "--" or not word.startswith("-") or word == "-":
            operands.append(word.lower())
            if stop:
                return [FILES]
            continue
        if slurm and word.startswith("--"):
            name, eq, _ = word[2:].partition("=")
            match = [f for n, f in longs.items() if n.startswith(name)]
            flag = longs.get(name) or (match[0] if len(match) == 1 else None)
            pending = flag if flag is not None and flag.takes == REQUIRED and not eq else None
        elif slurm:
            for k, letter in enumerate(word[1:], 1):
                flag = shorts.get(letter)
                if flag is None or flag.takes != NONE:
                    pending = flag if flag is not None and flag.takes == REQUIRED and k == len(word) - 1 else None
                    break
        else:
            flag = longs.get(word[1:])
            pending = flag if flag is not None and flag.takes else None
    if pending is not None:
        return _filter(_kind(pending.complete, None, None), current)
    if slurm and current.startswith("--") and "=" in current:
        name, _, value = current[2:].partition("=")
        flag = longs.get(name)
        if flag is None or flag.takes == NONE:
            return []
        found = _kind(flag.complete, None, None)
        if found[:1] in ([FILES], [DIRS]):
            return found
        return [f"--{name}={v}" for v in _filter(found, value)]
    if current.startswith("-"):
        if slurm:
            words = [f"--{f.name}" for f in table.flags] + [f"-{f.short}" for f in table.flags if f.short]
        else:
            words = [f"-{f.name}" for f in table.flags]
            words += [w for w in ("-h", "-V") if table.system == "lsf" and w not in words]
        return _filter(words, current)
    kind = table.complete
    if isinstance(kind, dict):  # a grammar of words (scontrol show job ID): what follows those given
        kind = kind.get(tuple(operands), kind.get((operands[0],) if operands else (), None))
    return _filter(_kind(kind, None, None), current)


def answer_front_end(words: list[str]) -> int:
    """``xce __complete-compat PROG WORD... CURRENT``."""
    if not words:
        return 0
    prog, *rest = words
    *done, current = rest or [""]
    for word in front_end_candidates(prog, done, current):
        sys.stdout.write(word + "\n")
    return 0


def _completion(shell: str) -> None:
    script(shell)


COMMAND = Command(
    "completion", "Print the shell completion script for xce and xceadmin (bash and zsh: also for the LSF "
                  "and Slurm commands, with queues, hosts, users and job ids from the cluster).",
    [Arg("shell", choices=tuple(SCRIPTS), help="The shell.")],
    _completion,
    examples=('eval "$(xce completion bash)"    # in ~/.bashrc', 'eval "$(xce completion zsh)"     # in ~/.zshrc',
              "xce completion fish > ~/.config/fish/completions/xce.fish"),
)

COMMAND_SPECS = [COMMAND]
__all__ = ["COMMAND", "candidates", "answer", "Opt"]
