"""The job start sequence (``xce.worker.launch``) run by root for a real unprivileged user.

Each attack is a path an owner could name in a submission; each test fails if the worker's root
rights reach the file system (a root file appended to, chowned, created), and checks the reason the
owner reads.
"""

from __future__ import annotations

import logging
import os
import signal
import stat
import threading
import time
from pathlib import Path

import pytest
from sec_harness import reachable_dir, unix_users

from xce.worker.identity import Identity, StartError, resolve_identity
from xce.worker.launch import LaunchSpec, launch

pytestmark = pytest.mark.integration

PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture(scope="module")
def world():
    with reachable_dir() as base, unix_users(2, base) as users:
        secret = base / "rootonly"  # root's: 0755 so the users can reach it, nothing in it writable by them
        secret.mkdir(mode=0o755)
        precious = secret / "precious"
        precious.write_text("precious\n")
        precious.chmod(0o644)
        private = base / "private"
        private.mkdir(mode=0o700)
        yield {"base": base, "users": users, "root_dir": secret, "root_file": precious, "private": private}


def ident(user) -> Identity:
    return resolve_identity(user.name, run_as_self=False, allow_root=False)


def spec(user, argv, *, stdout=None, stderr=None, cwd=None, prepare=()) -> LaunchSpec:
    out = str(stdout or user.home / "out")
    return LaunchSpec(argv=argv, env={"PATH": PATH, "HOME": str(user.home)}, cwd=str(cwd or user.home),
                      stdout=out, stderr=str(stderr or out), identity=ident(user), prepare=prepare)


def run(s: LaunchSpec) -> int:
    child = launch(s)
    rc = child.wait(30)
    assert rc is not None, "the job did not end"
    return rc


def untouched(path: Path, text: str = "precious\n") -> None:
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o644), f"{path} changed hands or mode"
    assert path.read_text() == text, f"{path} was written to"


def test_the_job_is_its_owner_with_the_owners_groups_and_no_way_back(world):
    user = world["users"][0]
    out = user.home / "id.out"
    assert run(spec(user, ["sh", "-c", "id -u; id -g; id -G; grep -E '^(Uid|Gid):' /proc/self/status"],
                    stdout=out)) == 0
    lines = out.read_text().split("\n")
    assert lines[0] == str(user.uid) and lines[1] == str(user.gid)
    assert sorted(map(int, lines[2].split())) == sorted(set(os.getgrouplist(user.name, user.gid)))
    assert 0 not in map(int, lines[2].split())
    # real, effective, saved and file-system ids are all the owner's: setuid(0) cannot work
    assert lines[3].split()[1:] == [str(user.uid)] * 4 and lines[4].split()[1:] == [str(user.gid)] * 4
    st = out.stat()
    assert (st.st_uid, st.st_gid) == (user.uid, user.gid)


def test_the_process_leads_its_own_session_with_default_signals(world):
    user = world["users"][0]
    out = user.home / "sess.out"
    child = launch(spec(user, ["sh", "-c", "cat /proc/self/stat; grep -E '^Sig(Ign|Blk)' /proc/self/status"],
                        stdout=out))
    assert child.wait(30) == 0
    stat_line, *masks = out.read_text().splitlines()[:3]
    fields = stat_line.rsplit(")", 1)[1].split()
    assert int(fields[2]) == int(fields[3]) == child.pid  # its own process group and session
    assert {m.split()[0]: m.split()[1] for m in masks} == {"SigBlk:": "0" * 16, "SigIgn:": "0" * 16}


def test_signals_the_worker_ignored_are_not_ignored_by_the_job_not_even_glibcs_own(world):
    """An ignored signal survives execve. Python cannot even name signals 32 and 33 (glibc keeps them), so
    the worker's ignore of one is made with the raw system call here, as a C library in the worker could."""
    import ctypes
    import platform

    number = {"x86_64": 13, "aarch64": 134}[platform.machine()]
    libc = ctypes.CDLL(None, use_errno=True)
    ignore = ctypes.create_string_buffer(32)
    ctypes.memmove(ignore, ctypes.byref(ctypes.c_uint64(1)), 8)  # handler SIG_IGN (1)
    before = ctypes.create_string_buffer(32)
    user = world["users"][0]
    out = user.home / "ign.out"
    assert libc.syscall(number, 32, ignore, before, 8) == 0
    previous_usr1 = signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    try:
        child = launch(spec(user, ["grep", "^SigIgn", "/proc/self/status"], stdout=out))
        assert child.wait(30) == 0
    finally:
        libc.syscall(number, 32, before, None, 8)
        signal.signal(signal.SIGUSR1, previous_usr1)
    assert out.read_text().split()[1] == "0" * 16


@pytest.mark.parametrize("which", ["stdout", "stderr"])
def test_a_root_owned_output_file_is_refused_and_left_alone(world, which):
    user, target = world["users"][0], world["root_file"]
    s = spec(user, ["sh", "-c", "echo pwned; echo pwned >&2"], **{which: target})
    with pytest.raises(StartError, match=f"cannot open output file {target} as user {user.name}: Permission denied"):
        launch(s)
    untouched(target)


def test_a_working_directory_the_owner_cannot_enter_is_refused(world):
    user, private = world["users"][0], world["private"]
    with pytest.raises(StartError, match=f"user {user.name} cannot enter the working directory {private}"):
        launch(spec(user, ["touch", "planted"], cwd=private, stdout=private / "out"))
    assert list(private.iterdir()) == []


def test_output_directories_are_created_as_the_owner_or_not_at_all(world):
    user, root_dir = world["users"][0], world["root_dir"]
    with pytest.raises(StartError, match=f"cannot create the directory {root_dir}/made for output file"):
        launch(spec(user, ["true"], stdout=root_dir / "made" / "deeper" / "out"))
    assert not (root_dir / "made").exists()
    deep = user.home / "a" / "b" / "out"
    assert run(spec(user, ["echo", "hi"], stdout=deep)) == 0
    for p in (user.home / "a", user.home / "a" / "b", deep):
        assert p.stat().st_uid == user.uid, p


def test_a_symlink_planted_in_the_owners_directory_is_not_followed(world):
    user, target = world["users"][0], world["root_file"]
    link = user.home / "out.link"
    link.symlink_to(target)
    os.lchown(link, user.uid, user.gid)
    with pytest.raises(StartError, match=f"output file {link} is a symbolic link"):
        launch(spec(user, ["echo", "pwned"], stdout=link))
    untouched(target)
    # a link to a directory in the middle of the path: followed, but with the owner's rights only
    dlink = user.home / "dir.link"
    dlink.symlink_to(world["root_dir"])
    with pytest.raises(StartError, match="Permission denied"):
        launch(spec(user, ["echo", "pwned"], stdout=dlink / "new"))
    assert not (world["root_dir"] / "new").exists()


def test_dot_dot_paths_get_the_owners_rights_only(world):
    user, root_dir = world["users"][0], world["root_dir"]
    sneaky = f"{user.home}/../../{world['base'].name}/{root_dir.name}/precious"
    with pytest.raises(StartError, match="Permission denied"):
        launch(spec(user, ["echo", "pwned"], stdout=sneaky))
    untouched(world["root_file"])


def test_another_users_files_are_out_of_reach(world):
    alice, bob = world["users"]
    (alice.home / "diary").write_text("mine\n")
    with pytest.raises(StartError, match="Permission denied"):
        launch(spec(bob, ["true"], stdout=alice.home / "diary"))
    assert (alice.home / "diary").read_text() == "mine\n"


def test_a_fifo_with_no_reader_fails_at_once(world):
    user = world["users"][0]
    fifo = user.home / "fifo"
    os.mkfifo(fifo)
    os.chown(fifo, user.uid, user.gid)
    t0 = time.monotonic()
    with pytest.raises(StartError, match="FIFO nobody is reading"):
        launch(spec(user, ["true"], stdout=fifo))
    assert time.monotonic() - t0 < 5


def test_command_errors_name_the_command_and_the_user(world):
    user = world["users"][0]
    with pytest.raises(StartError, match="command not found: no-such-program-xts"):
        launch(spec(user, ["no-such-program-xts"]))
    script = world["root_dir"] / "rootonly.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o700)
    with pytest.raises(StartError, match=f"cannot execute {script} as user {user.name}: Permission denied"):
        launch(spec(user, [str(script)]))


def test_preparation_steps_run_as_root_before_the_switch(world):
    user = world["users"][0]
    seen = []

    def note(pid: int) -> None:
        with open(f"/proc/{pid}/status") as f:
            seen.append(next(line for line in f if line.startswith("Uid:")).split()[1:])

    assert run(spec(user, ["true"], prepare=[note])) == 0
    assert seen == [["0", "0", "0", "0"]]

    def broken(pid: int) -> None:
        raise OSError("cgroup.procs: no such file")

    out = user.home / "never.out"
    with pytest.raises(StartError, match="preparing the job's process failed: cgroup.procs: no such file"):
        launch(spec(user, ["touch", str(user.home / "never.ran")], stdout=out, prepare=[broken]))
    assert not out.exists() and not (user.home / "never.ran").exists()


def test_starts_are_safe_while_other_threads_hold_locks(world):
    """The worker forks from a threaded process: busy threads (logging, locks) never hang a start."""
    user = world["users"][1]
    stop = threading.Event()
    lock = threading.Lock()
    log = logging.getLogger("xts.busy")
    log.addHandler(logging.NullHandler())

    def busy():
        while not stop.is_set():
            with lock:
                log.warning("busy %s", time.monotonic())

    threads = [threading.Thread(target=busy, daemon=True) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        children = [launch(spec(user, ["sh", "-c", f"echo {i}"], stdout=user.home / f"t{i}.out")) for i in range(40)]
        assert [c.wait(30) for c in children] == [0] * 40
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert [(user.home / f"t{i}.out").read_text() for i in range(40)] == [f"{i}\n" for i in range(40)]


def test_root_jobs_need_permission():
    with pytest.raises(StartError, match="root jobs are not allowed"):
        resolve_identity("root", run_as_self=False, allow_root=False)
    with pytest.raises(StartError, match="does not exist on this host"):
        resolve_identity("xts-nobody-here", run_as_self=False, allow_root=False)
