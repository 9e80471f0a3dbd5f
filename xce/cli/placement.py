"""Where and on how much a job runs, from the options LSF and Slurm users write: several ``-R``
merged into one requirement, host lists, per-host amounts turned into XCE's per-slot ones.

XCE reserves resources per slot (``--request`` and ``rusage[]`` are per task, a task is a slot);
Slurm counts memory and GPUs per node, per CPU or per task, LSF's ``-gpu`` per host. A per-host
amount needs the slots each host gets: from ``--nodes``, ``--ntasks-per-node``, a written
``span[hosts=1]`` or ``span[ptile=N]``, or, for a Slurm job without ``--nodes``, one host (Slurm
fills a node's CPUs before it takes another). Memory per slot is rounded up to the byte; GPUs that
do not divide evenly are reserved once per host where that is what was asked
(``rusage[xce.io/gpu=N/host]``, :func:`xce.cli.submit._gpus`), or refused with what to write instead.

Standard library only (the submit command's start-up stays cheap).
"""

from __future__ import annotations

from xce.cli.jobscript import Refused
from xce.hostlist import expand_word, split_top

_CLAUSES = ("select", "order", "rusage", "span")


def _bare_select(text: str) -> tuple[str, int]:
    """A requirement that opens without a section name (``-R gpu``, ``-R "hname!=a && hname!=b"``):
    LSF reads it as a selection string ("The select keyword can be omitted if the selection string
    is the first string in the resource requirement", LSF's "Selection string"). Its text up to the
    first section, and where that section starts (``len(text)`` when there is none)."""
    import re

    found = re.search(r"\b(?:select|order|rusage|span|same|cu|affinity)\s*\[", text)
    end = found.start() if found else len(text)
    return text[:end].strip(), end


def _clauses(text: str) -> list[tuple[str, str]]:
    """``select[a] rusage[b]`` as [("select", "a"), ("rusage", "b")]; Refused for anything else."""
    out: list[tuple[str, str]] = []
    bare, i = _bare_select(text)
    if bare:
        out.append(("select", bare))
    n = len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i == n:
            return out
        j = i
        while j < n and text[j].isalpha():
            j += 1
        word = text[i:j]
        if word not in _CLAUSES or j == n or text[j] != "[":
            raise Refused(f"-R {text!r}: only requirements made of select[], order[], rusage[] and span[] "
                          "can be combined with another -R (give one -R for a compound requirement)")
        depth, k, quoted = 0, j, False
        while k < n:
            c = text[k]
            if quoted:
                if c == "\\":
                    k += 1
                elif c == '"':
                    quoted = False
            elif c == '"':
                quoted = True
            elif c == "[":
                depth += 1
            elif c == "]":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        if k == n:
            raise Refused(f"-R {text!r}: {word}[ is not closed")
        out.append((word, text[j + 1:k].strip()))
        i = k + 1


def _rusage_items(body: str) -> list[tuple[str, str]]:
    items = []
    for piece in body.replace(",", ":").split(":"):
        name, eq, value = piece.partition("=")
        if piece.strip():
            items.append((name.strip(), value.strip()) if eq else (piece.strip(), ""))
    return items


#: LSF's GPU resources (its GPU ELIM and the ``LSF_GPU_AUTOCONFIG`` names), which older scripts
#: reserve in ``rusage[]`` (``rusage[ngpus_excl_p=1]``) before ``-gpu`` existed: GPUs of a host.
LSF_GPU_RUSAGE = ("ngpus_physical", "ngpus_excl_p", "ngpus_excl_t", "ngpus_shared", "ngpus")


def gpu_rusage(texts: list[str]) -> tuple[list[str], int | None]:
    """The ``-R`` texts with LSF's GPU resources taken out of their ``rusage[]``, and the GPUs
    they reserve per host (None: none named), so that they become the job's GPUs."""
    import re

    count: int | None = None
    out = []
    for text in texts:
        def take(match: re.Match) -> str:
            nonlocal count
            kept = []
            for name, value in _rusage_items(match.group(1)):
                if name in LSF_GPU_RUSAGE:
                    amount = value.partition("/")[0].strip()
                    if not amount.isdigit():
                        raise Refused(f"-R rusage[{name}={value}]: a GPU count is a whole number")
                    if count is not None and count != int(amount):
                        raise Refused(f"-R: GPUs given twice with different counts ({count} and {amount})")
                    count = int(amount)
                else:
                    kept.append(f"{name}={value}" if value else name)
            return f"rusage[{':'.join(kept)}]" if kept else ""
        out.append(re.sub(r"rusage\s*\[([^\]]*)\]", take, text) if "ngpus" in text else text)
    return out, count


def merge_requirements(texts: list[str]) -> str:
    """Several ``-R`` as LSF merges them: the selects AND-ed, the rusage entries together, one order
    and one span (the same one given twice is fine; two different ones are refused). One ``-R``
    is passed as written, so the controller's errors point into the user's own text."""
    texts = [t for t in texts if t.strip()]
    if len(texts) <= 1:
        return texts[0] if texts else ""
    selects: list[str] = []
    rusage: dict[str, str] = {}
    single: dict[str, str] = {}
    for text in texts:
        for word, body in _clauses(text):
            if word == "select":
                selects.append(body)
            elif word == "rusage":
                for name, value in _rusage_items(body):
                    if rusage.get(name, value) != value:
                        raise Refused(f"-R: rusage[{name}] is given twice with different amounts ({rusage[name]} "
                                      f"and {value}); give it once")
                    rusage[name] = value
            elif single.get(word, body) != body:
                raise Refused(f"-R: two different {word}[] ({single[word]} and {body}); a job has one {word}")
            else:
                single[word] = body
    parts = []
    if selects:
        parts.append("select[" + (selects[0] if len(selects) == 1 else " && ".join(f"({s})" for s in selects)) + "]")
    if "order" in single:
        parts.append(f"order[{single['order']}]")
    if rusage:
        parts.append("rusage[" + ":".join(f"{n}={v}" if v else n for n, v in rusage.items()) + "]")
    if "span" in single:
        parts.append(f"span[{single['span']}]")
    return " ".join(parts)


def host_list(texts: list[str] | None) -> list[str] | None:
    """``-m "a b g1"``, ``-w a,b``, ``-w node[1-3,05]``: the names, ranges expanded. LSF's ``+N``
    preference marks are dropped (every named host is a candidate); ``others`` (any other host)
    makes the list no restriction at all."""
    if not texts:
        return None
    names: list[str] = []
    for text in texts:
        for word in split_top(text.replace(" ", ",").replace("\t", ",")):
            if word == "others":
                return None
            try:
                names += expand_word(word.rstrip("+0123456789") if "+" in word else word)
            except ValueError as exc:
                raise Refused(str(exc)) from None
    return list(dict.fromkeys(names)) or None


def warning(signal: str | None, warn_signal: str | None, warn_time: int | None) -> dict:
    """sbatch's ``--signal=[B:]SIG[@SECONDS]`` or bsub's ``-wa SIG -wt TIME``: the API's warning fields."""
    if signal is not None:
        if warn_signal is not None or warn_time is not None:
            raise Refused("--signal and --warn-signal/--warn-time both set the warning signal; give one")
        where, colon, rest = signal.partition(":")
        if not colon:
            where, rest = "", signal
        if where.upper() not in ("", "B", "R", "BR", "RB"):
            raise Refused(f"--signal {signal!r}: expected [B:]SIG[@SECONDS], e.g. B:USR2@90")
        sig, at, seconds = rest.partition("@")
        if at and not seconds.strip().isdigit():
            raise Refused(f"--signal {signal!r}: expected [B:]SIG[@SECONDS], e.g. B:USR2@90")
        out = {"warn_signal": sig.strip(), "warn_time": int(seconds) if at else 60}  # Slurm's default: 60 s
        if "B" in where.upper():
            out["warn_batch_only"] = True
        return out
    if (warn_signal is None) != (warn_time is None):
        raise Refused("give --warn-signal (bsub -wa) and --warn-time (bsub -wt) together")
    return {} if warn_signal is None else {"warn_signal": warn_signal, "warn_time": warn_time}


def per_slot(amount: int, over: int | None, what: str, fix: str, of: str = "per host") -> int:
    """``amount`` spread over ``over`` slots (``of``: per host, per task, of the job), which must
    divide it (resources are reserved per slot here)."""
    if over is None:
        raise Refused(f"{what} cannot be given per slot: the slots each host gets are not known ({fix})")
    if amount % over:
        raise Refused(f"{amount} {what} over {over} slots {of}: this cluster reserves them per slot (CPU), and "
                      f"{amount} does not divide among {over} ({fix})")
    return amount // over


def gpu_spec(text: str, option: str) -> tuple[str | None, int]:
    """``N``, ``TYPE:N`` or ``gpu:TYPE:N`` (Slurm's ``--gpus`` forms): the GPU model (None: any) and
    the count."""
    words = [w.strip() for w in text.strip().split(":")]
    if words[0] == "gpu":
        words = words[1:]
    if len(words) == 1 and words[0].isdigit():
        return None, int(words[0])
    if len(words) == 2 and words[0] and words[1].isdigit():
        return words[0], int(words[1])
    raise Refused(f"{option} {text!r}: expected [TYPE:]COUNT, e.g. 2 or a100:2")


def gres_gpus(texts: list[str]) -> tuple[str | None, int]:
    """``--gres=gpu:2``, ``gpu:a100:2``, ``gpu:a100`` (one), ``gpu:2,gpu:1``: the GPU model and the
    GPUs per node; other generic resources are refused as Slurm refuses an unknown one."""
    total, models = 0, set()
    for text in texts:
        for item in split_top(text):
            if item in ("none", "NONE"):
                continue
            name, _, rest = item.partition(":")
            if name.split("/", 1)[0] != "gpu":
                raise Refused(f"--gres {item!r}: Invalid generic resource (gres) specification (this cluster has "
                              "only gpu; other resources are reserved with --request NAME=QTY)")
            parts = rest.split(":") if rest else []
            if parts and not parts[-1].isdigit():
                parts.append("1")  # gpu:TYPE is one GPU of that type
            model, count = gpu_spec(":".join(parts) or "1", "--gres")
            if model:
                models.add(model)
            total += count
    if len(models) > 1:
        raise Refused(f"--gres: GPUs of several models ({', '.join(sorted(models))}); a job's GPUs are of one model")
    return (models.pop() if models else None), total
