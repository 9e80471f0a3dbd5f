"""Shell completion for ``xce`` and ``xceadmin``, answered from the command declarations.

``xce completion bash`` (or ``zsh``, ``fish``) prints a script that, on TAB, runs
``xce __complete WORD... CURRENT`` and offers what it prints, one candidate per line. The answer
walks the words with the same declaration the parser uses, so it offers exactly the commands,
options and choices that the command line would accept. ``__files__``/``__dirs__`` as the answer
hands over to the shell's own file-name completion (paths, the command of ``xce submit``).
"""

from __future__ import annotations

import sys

from xce.cli.spec import HELP_FLAGS, Arg, Command, Group, Opt, _looks_negative, path

FILES, DIRS = "__files__", "__dirs__"

BASH = r"""# XCE completion for bash: add to ~/.bashrc:  eval "$(xce completion bash)"
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


def script(shell: str) -> None:
    sys.stdout.write(SCRIPTS[shell])


def _kind(complete, kind, choices) -> list[str]:
    if choices:
        return [str(c) for c in choices]
    if complete == "dir":
        return [DIRS]
    if complete == "file" or kind is path:
        return [FILES]
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


def _completion(shell: str) -> None:
    script(shell)


COMMAND = Command(
    "completion", "Print the shell completion script for xce and xceadmin.",
    [Arg("shell", choices=tuple(SCRIPTS), help="The shell.")],
    _completion,
    examples=('eval "$(xce completion bash)"    # in ~/.bashrc', 'eval "$(xce completion zsh)"     # in ~/.zshrc',
              "xce completion fish > ~/.config/fish/completions/xce.fish"),
)

COMMAND_SPECS = [COMMAND]
__all__ = ["COMMAND", "candidates", "answer", "Opt"]
