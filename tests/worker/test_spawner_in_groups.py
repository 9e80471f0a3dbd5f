"""A job that runs as the worker's own user is started by its spawner from inside the job's control
groups, without a fork (``posix_spawn``), on this machine's real cgroup v1 hierarchies and on its
real v2 mount (root only): the process is born a member of every group, in its own session, with
its 0, 1 and 2 only and no signal blocked or ignored; the spawner is back in its own group after
every start, failed or not; refusals say what was wrong as the forked start says it; and a job with
limits the spawner could be caught by, or with a path on a file system that could stop answering,
is still forked and moved in."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from xce.worker import launch, localfs, runner, spawner
from xce.worker.containment import CgroupV1, CgroupV2, Containment, ContainmentError, Limits, detect
from xce.worker.containment.base import SPAWNER, VISITOR_MIN_MEM
from xce.worker.containment.cgroupfs import job_ids
from xce.worker.identity import StartError

V2_MOUNT = Path("/sys/fs/cgroup/unified")


def _v1() -> Containment:
    try:
        return detect("w1", kind="cgroup-v1", parent=f"xce-test-{uuid.uuid4().hex[:8]}")
    except ContainmentError as exc:
        pytest.skip(str(exc))


def _v2() -> Containment:
    # This machine's v2 mount delegates no controllers, but its membership is as real as any.
    if not (V2_MOUNT / "cgroup.procs").exists():
        pytest.skip(f"no cgroup v2 mount at {V2_MOUNT}")
    return CgroupV2(V2_MOUNT, f"xce-test-{uuid.uuid4().hex[:8]}", "w1")


@pytest.fixture(params=["cgroup-v1", "cgroup-v2"])
def box(request):
    if os.geteuid() != 0:
        pytest.skip("control groups need root")
    b = _v1() if request.param == "cgroup-v1" else _v2()
    b.start(set())
    yield b
    spawner.stop_shared()  # its own group goes with the worker's only once it has gone
    for jobid in b.known():
        b.remove(jobid)
    b.close()
    assert not any(d.exists() for d in (b.dirs if isinstance(b, CgroupV1) else [b.base]))


def _spec(tmp_path, argv, box: Containment, jobid: int, **kw) -> launch.LaunchSpec:
    ident = runner.resolve_identity("", run_as_self=True, allow_root=True)
    join = launch.Join(box.procs_files(jobid), box.home_files(jobid))
    kw.setdefault("stdout", str(tmp_path / "out"))
    return launch.LaunchSpec(argv=argv, env={"PATH": "/usr/bin:/bin", "ONLY": "this"}, cwd=kw.pop("cwd", str(tmp_path)),
                             stderr=kw.pop("stderr", kw["stdout"]), identity=ident, prepare=[join],
                             exit_file=str(tmp_path / f"{jobid}.exit"), **kw)


def _cgroups(pid: int | str) -> str:
    return Path(f"/proc/{pid}/cgroup").read_text()


def _in(box: Containment, cgroup: str, jobid: int, leaf: str) -> bool:
    """Whether ``cgroup`` (a ``/proc/PID/cgroup``) puts its process in this box's group ``leaf`` in
    every hierarchy job ``jobid`` has a group in."""
    dirs = {Path(f).parent.parent for f in box.procs_files(jobid)}  # <mount>/<own group>/<parent>/w1
    assert len(dirs) == (1 if isinstance(box, CgroupV2) else len(box.procs_files(jobid)))
    top = next(iter(dirs))
    suffix = f"/{top.parent.name}/{top.name}/{leaf}"
    wanted = set().union(*(box.controllers[d] for d in dirs)) if isinstance(box, CgroupV1) else {""}
    seen: set[str] = set()
    for line in cgroup.splitlines():
        _, names, path = line.split(":", 2)
        mine = wanted & (set(names.split(",")) if names else {""})
        if mine:
            if not path.endswith(suffix):
                return False
            seen |= mine
    return seen == wanted


def test_the_job_is_born_in_its_groups_in_its_own_session_with_only_its_three_descriptors(tmp_path, box):
    # v1: a group in every hierarchy this box has (this machine's v2 mount has no cpu or pids to limit)
    box.create(7, Limits(cpu_milli=500, pids=100) if isinstance(box, CgroupV1) else Limits())
    script = ("cat /proc/self/cgroup > cg; ls /proc/$$/fd; echo --; grep -E '^Sig(Blk|Ign)' /proc/self/status; "
              "cut -d' ' -f1,6 /proc/$$/stat; pwd; env | sort")
    child = launch.launch(_spec(tmp_path, ["sh", "-c", script], box, 7))
    assert child.wait(10) == 0
    child.forget()
    assert _in(box, (tmp_path / "cg").read_text(), 7, "job_7"), (tmp_path / "cg").read_text()
    fds, rest = (tmp_path / "out").read_text().split("--\n")
    assert fds.split() == ["0", "1", "2"]  # the shell's own: nothing of the spawner's leaked into the job
    lines = rest.splitlines()
    assert lines[0:2] == ["SigBlk:\t" + "0" * 16, "SigIgn:\t" + "0" * 16]
    sh_pid, session = lines[2].split()
    assert sh_pid == session == str(child.pid)  # it leads its own session
    assert lines[3] == str(tmp_path)
    assert [x for x in lines[4:] if not x.startswith(("PWD=", "SHLVL=", "_=", "OLDPWD="))] == ["ONLY=this",
                                                                                                "PATH=/usr/bin:/bin"]
    sp = spawner.shared()
    assert child.pid != sp.proc.pid and _in(box, _cgroups(sp.proc.pid), 7, SPAWNER)  # back in its own group
    assert box.members(7) == []


def test_refusals_say_what_was_wrong_start_nothing_and_the_spawner_comes_back(tmp_path, box):
    box.create(10, Limits())
    child = launch.launch(_spec(tmp_path, ["sh", "-c", "cat /proc/self/cgroup"], box, 10, stdout=str(tmp_path / "10")))
    assert child.wait(10) == 0
    child.forget()
    assert _in(box, (tmp_path / "10").read_text(), 10, "job_10")
    box.create(8, Limits())
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    cases = [
        (dict(cwd=str(tmp_path / "nowhere")), ["true"], f"working directory {tmp_path / 'nowhere'} does not exist"),
        (dict(stdout=str(tmp_path / "link")), ["true"], "output file .*link is a symbolic link"),
        ({}, ["no-such-program-grp"], "command not found: no-such-program-grp"),
        ({}, [str(tmp_path)], f"cannot execute {tmp_path} as user .*: Permission denied"),
    ]
    for kw, argv, reason in cases:
        with pytest.raises(StartError, match=reason):
            launch.launch(_spec(tmp_path, argv, box, 8, **kw))
        assert box.members(8) == []
        assert _in(box, _cgroups(spawner.shared().proc.pid), 8, SPAWNER)
    assert not (tmp_path / "elsewhere").exists()
    # A job's group gone, in its last hierarchy, before its start: the join is refused, and the spawner
    # does not stay in the groups it had entered already.
    box.create(9, Limits())
    last = Path(box.procs_files(9)[-1]).parent
    last.rmdir()
    with pytest.raises(StartError, match="preparing the job's process failed: .*No such file"):
        launch.launch(_spec(tmp_path, ["touch", str(tmp_path / "never.ran")], box, 9))
    assert not (tmp_path / "never.ran").exists()
    assert _in(box, _cgroups(spawner.shared().proc.pid), 8, SPAWNER)
    assert box.members(9) == []


def test_limits_that_could_catch_the_spawner_have_the_job_forked_and_moved_in_instead():
    assert Limits().admit_visitor() and Limits(mem=VISITOR_MIN_MEM, pids=2, cpu_milli=10).admit_visitor()
    assert not Limits(mem=VISITOR_MIN_MEM - 1).admit_visitor()  # its OOM kill could pick the spawner
    assert not Limits(pids=1).admit_visitor()  # its clone would be refused


@pytest.mark.parametrize("box", ["cgroup-v1"], indirect=True)  # this machine's v2 mount has no pids controller
def test_a_job_with_a_pids_limit_of_one_still_starts_in_its_group(tmp_path, box):
    box.create(11, Limits(pids=1))
    # What the worker does for such a job: no home, so the spawner forks it and writes its pid.
    spec = _spec(tmp_path, ["cat", "/proc/self/cgroup"], box, 11)
    spec = launch.LaunchSpec(**{**spec.__dict__, "prepare": [launch.Join(box.procs_files(11), None)]})
    child = launch.launch(spec)
    assert child.wait(10) == 0
    child.forget()
    assert _in(box, (tmp_path / "out").read_text(), 11, "job_11")
    assert job_ids(box.dirs[0]) == [11]


def _scratch_on_cgroup2() -> Path:
    """A directory on a file system that is not one of this host's disks: the cgroup2 mount stands in
    for an NFS one (what matters is that the mount table does not call it local)."""
    d = V2_MOUNT / f"xce-test-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    return d


def test_paths_are_followed_through_the_mount_table_links_included(tmp_path):
    if os.geteuid() != 0 or not (V2_MOUNT / "cgroup.procs").exists():
        pytest.skip("needs root and this machine's cgroup v2 mount")
    remote = _scratch_on_cgroup2()
    try:
        (tmp_path / "home").symlink_to(remote)
        (tmp_path / "loop").symlink_to(tmp_path / "loop")
        (tmp_path / "up").mkdir()
        cases = {
            bytes(tmp_path / "out"): True,
            b"/usr/bin/true": True,
            bytes(remote / "job.out"): False,
            bytes(tmp_path / "home" / "job.out"): False,  # a link on a local disk into the other one
            b"../home/x": False,  # relative to tmp_path/up
            bytes(tmp_path / "loop" / "x"): True,  # refused at once (ELOOP) wherever it is
            bytes(tmp_path / "missing" / "x"): True,  # fails at once
        }
        for path, local in cases.items():
            assert localfs.is_local(path, bytes(tmp_path / "up")) is local, path
    finally:
        remote.rmdir()


@pytest.mark.parametrize("box", ["cgroup-v1"], indirect=True)  # the stand-in remote mount is the v2 one
def test_a_job_with_a_path_on_another_kind_of_file_system_is_forked(tmp_path, box):
    """Its working directory on a mount the table does not call local: the spawner stays out of the
    job's groups (it forks), and the job still starts in its groups, in that directory."""
    remote = _scratch_on_cgroup2()
    try:
        spawner.stop_shared()
        box.create(12, Limits())
        child = launch.launch(_spec(tmp_path, ["sh", "-c", "pwd; cat /proc/self/cgroup"], box, 12, cwd=str(remote)))
        assert child.wait(10) == 0
        child.forget()
        where, *cgroup = (tmp_path / "out").read_text().splitlines()
        assert where == str(remote)
        assert _in(box, "\n".join(cgroup), 12, "job_12")
        assert not any(line.endswith(f"/{SPAWNER}") for line in _cgroups(spawner.shared().proc.pid).splitlines())
    finally:
        remote.rmdir()


def test_the_mount_table_reads_escaped_and_non_utf8_mount_points(tmp_path):
    """One reader of mountinfo for the containment's choice and for this check: octal escapes undone,
    bytes that are not UTF-8 kept, a mount over the same point listed after the one it hides."""
    info = tmp_path / "mountinfo"
    info.write_bytes(b"22 1 0:21 / / rw - ext4 /dev/vda rw\n"
                     b"30 22 0:40 / /mnt/my\\040disk rw - nfs4 srv:/x rw,vers=4.2\n"
                     b"31 22 0:41 / /mnt/caf\xe9 rw - tmpfs tmpfs rw\n"
                     b"32 30 0:42 / /mnt/my\\040disk rw - xfs /dev/vdb rw\n"
                     b"garbage\n")
    table = localfs.mount_table(str(info))
    assert [(t, os.fsencode(p)) for t, p, _ in table] == [
        ("ext4", b"/"), ("nfs4", b"/mnt/my disk"), ("tmpfs", b"/mnt/caf\xe9"), ("xfs", b"/mnt/my disk")]
    assert table[1][2] == {"rw", "vers=4.2"}
    assert localfs.mount_table(str(tmp_path / "missing")) == []
