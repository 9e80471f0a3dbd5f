"""What mail a job asked for, read from the options it was submitted with.

The front-ends keep the options with the job as recorded options (``mail_type``, ``mail_user``,
``mail_begin``, ``mail_end``, ``mail_error``) and the views show them from there, so the mail
needs no column of its own: this module is the one reader of those keys. A job asks in one
family's words, Slurm's or LSF's, and is mailed in that family's words.

Standard library only: ``sbatch`` imports it to refuse a mail type Slurm refuses.
"""

from __future__ import annotations

__all__ = ["ALL", "RECORD_KEYS", "TYPES", "Asked", "asked", "parse_mail_type"]

#: Slurm's mail types (sbatch(1) ``--mail-type``), besides NONE and ALL.
TYPES = ("BEGIN", "END", "FAIL", "REQUEUE", "INVALID_DEPEND", "STAGE_OUT", "TIME_LIMIT", "TIME_LIMIT_90",
         "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS")
#: What ``ALL`` stands for (sbatch(1): the time limit types and ARRAY_TASKS are not in it).
ALL = ("BEGIN", "END", "FAIL", "INVALID_DEPEND", "REQUEUE", "STAGE_OUT")

SLURM, LSF = "slurm", "lsf"
#: The recorded options that are the job's mail request, as the front-ends record them.
RECORD_KEYS = ("mail_type", "mail_user", "mail_begin", "mail_end", "mail_error")


def parse_mail_type(text: str) -> frozenset[str]:
    """``--mail-type``'s value: a comma-separated list, in any case; ``NONE`` clears what came before
    it, as Slurm's parser does. ValueError names a word Slurm would refuse."""
    out: set[str] = set()
    for word in (w.strip().upper() for w in text.split(",")):
        if word == "NONE":
            out.clear()
        elif word == "ALL":
            out.update(ALL)
        elif word in TYPES:
            out.add(word)
        else:
            raise ValueError(f"--mail-type={text} invalid")
    return frozenset(out)


class Asked:
    """A job's request: the family whose words it used, the occasions (Slurm's type names; LSF's
    ``-B``/``-N``/``-Ne`` as BEGIN/END/FAIL), and the address it gave (None: its user's).
    A plain class, not a dataclass: ``dataclasses`` costs the submitting commands its imports."""

    __slots__ = ("family", "types", "to")

    def __init__(self, family: str, types: frozenset[str], to: str | None) -> None:
        self.family, self.types, self.to = family, types, to

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Asked) and (self.family, self.types, self.to) == (other.family, other.types, other.to)

    def __hash__(self) -> int:
        return hash((self.family, self.types, self.to))

    def __repr__(self) -> str:
        return f"Asked({self.family!r}, {sorted(self.types)!r}, {self.to!r})"


def asked(recorded: dict[str, str] | None) -> Asked | None:
    """What a job's recorded options ask for; None when they ask for no mail.

    LSF's ``-u`` alone asks for nothing (it only says where bsub's mail goes), nor does Slurm's
    ``--mail-user`` alone: slurmctld mails only the types asked."""
    rec = recorded or {}
    to = rec.get("mail_user") or None
    if "mail_type" in rec:
        try:
            types = parse_mail_type(rec["mail_type"])
        except ValueError:
            return None  # recorded before sbatch checked it: it asks for nothing Slurm would send
        return Asked(SLURM, types, to) if types else None
    lsf = {t for key, t in (("mail_begin", "BEGIN"), ("mail_end", "END"), ("mail_error", "FAIL")) if key in rec}
    return Asked(LSF, frozenset(lsf), to) if lsf else None

