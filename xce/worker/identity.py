"""Who a job runs as on this host.

On a root worker (production) every job runs as its owner, a local Unix user; the worker never
acts on the job's behalf with its own rights. A worker that is not root, or one told to run every
job as itself (``--run-as-self``: a personal cluster), runs jobs as its own user.

Everything here reads the user database (NSS), which may take locks and talk to a directory
service, so it runs in the worker before the job's process is forked; the forked child only makes
system calls (see :mod:`xce.worker.launch`).
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass


class StartError(Exception):
    """The job cannot start here; the message is the reason its owner reads."""


@dataclass(frozen=True, slots=True)
class Identity:
    uid: int
    gid: int
    name: str
    home: str
    shell: str
    #: The supplementary groups (``initgroups``), resolved before the fork.
    groups: tuple[int, ...]
    #: Whether the child must change user (the worker is root and the owner is someone else).
    switch: bool


def _identity(pw: pwd.struct_passwd, switch: bool) -> Identity:
    try:
        groups = tuple(os.getgrouplist(pw.pw_name, pw.pw_gid))
    except OSError:
        groups = (pw.pw_gid,)
    return Identity(pw.pw_uid, pw.pw_gid, pw.pw_name, pw.pw_dir, pw.pw_shell, groups, switch)


def resolve_identity(owner: str, *, run_as_self: bool, allow_root: bool) -> Identity:
    """Who the job runs as: its owner when the worker is root, otherwise the worker's own user."""
    if run_as_self or os.getuid() != 0:
        # A personal cluster (``xce up``) or an unprivileged worker: it can only run jobs as itself.
        me = pwd.getpwuid(os.getuid())
        return Identity(me.pw_uid, me.pw_gid, me.pw_name, me.pw_dir, me.pw_shell, tuple(os.getgroups()), False)
    try:
        pw = pwd.getpwnam(owner)
    except (KeyError, ValueError):
        raise StartError(f"user {owner!r} does not exist on this host (the job's owner must be a local user "
                         f"when the worker runs as root)") from None
    if pw.pw_uid == 0 and not allow_root:
        raise StartError(f"job owner {owner!r} is root and root jobs are not allowed on this worker "
                         f"(start it with --allow-root-jobs to permit them)")
    return _identity(pw, pw.pw_uid != os.getuid())
