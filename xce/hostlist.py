"""Host lists as Slurm writes them (``node[01-03,7],login``): one grammar for every place that reads
or writes one — the ``-m``/``-w`` host restrictions of a submission, the Slurm front-ends' node lists
(``scontrol show hostnames``, ``sinfo %N``) and the simulator's placement column (``xce.sim.hostlist``).

A name ends in a number or range list in one pair of brackets; a bound written with leading zeros
sets the width of every number of its range (``n[08-10]``: n08 n09 n10).
"""

from __future__ import annotations


def split_top(text: str) -> list[str]:
    """The comma-separated words of ``text``, commas inside brackets kept (``a[1,2],b`` -> 2 words)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c == "[") - (c == "]")
        if c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [w.strip() for w in out if w.strip()]


def expand_word(word: str) -> list[str]:
    """``node[1-3,05]`` -> node1 node2 node3 node05; ValueError naming what is wrong."""
    if "[" not in word:
        return [word]
    head, _, rest = word.partition("[")
    inside, close, tail = rest.partition("]")
    if not close or "[" in tail or "]" in tail:
        raise ValueError(f"host list {word!r}: expected NAME[RANGES], e.g. node[1-3,5] (one bracket)")
    out = []
    for part in inside.split(","):
        low, dash, high = part.strip().partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise ValueError(f"host list {word!r}: expected numbers or ranges inside the brackets, e.g. node[1-3,5]")
        if dash and int(high) < int(low):
            raise ValueError(f"host list {word!r}: the range {part.strip()!r} runs backwards")
        width = len(low) if low.startswith("0") else 0
        out += [f"{head}{str(n).zfill(width)}{tail}" for n in range(int(low), int(high if dash else low) + 1)]
    return out


def expand(text: str) -> list[str]:
    """A whole host list (``a[01-03,7],b2``) -> host names, in the order written."""
    if text.count("[") != text.count("]"):
        raise ValueError(f"unbalanced brackets in host list {text!r}")
    return [name for word in split_top(text) for name in expand_word(word)]


def compress(names: list[str]) -> str:
    """``a1,a2,a3,b`` -> ``a[1-3],b`` as Slurm prints a node list: names that end in digits of one
    width under one prefix share brackets, numbers sorted, each name once."""
    groups: dict[tuple[str, int], list[int]] = {}
    order: list[tuple[str, int] | str] = []
    for name in names:
        stem = name.rstrip("0123456789")
        digits = name[len(stem):]
        if not digits:
            order.append(name)
            continue
        key = (stem, len(digits) if digits.startswith("0") else 0)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(digits))
    out = []
    for item in order:
        if isinstance(item, str):
            out.append(item)
            continue
        stem, width = item
        nums = sorted(set(groups[item]))
        if len(nums) == 1:
            out.append(f"{stem}{nums[0]:0{width}d}")
            continue
        parts, i = [], 0
        while i < len(nums):
            j = i
            while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
                j += 1
            parts.append(f"{nums[i]:0{width}d}" if i == j else f"{nums[i]:0{width}d}-{nums[j]:0{width}d}")
            i = j + 1
        out.append(f"{stem}[{','.join(parts)}]")
    return ",".join(out)
