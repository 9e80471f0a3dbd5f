"""``xce compat``: the LSF and Slurm commands land in a directory of their own, start as ``xce`` does,
never overwrite a real LSF or Slurm, and the LSF files clients read say what the cluster really is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from xce.client.launch import start_controller
from xce.compat.programs import LAUNCHERS, LSF_CLIENTS, PROGRAMS, SLURM_CLIENTS

XCE = [sys.executable, "-m", "xce.cli.main"]


def xce(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
    return subprocess.run([*XCE, *args], capture_output=True, text=True, timeout=60, env={**base, **(env or {})})


def test_install_writes_one_executable_launcher_per_program_run_by_this_interpreter(tmp_path):
    r = xce("compat", "install", "--only-me", str(tmp_path / "bin"))
    assert r.returncode == 0, r.stderr
    assert str(tmp_path / "bin") in r.stdout
    names = sorted(p.name for p in (tmp_path / "bin").iterdir())
    assert names == sorted(LAUNCHERS)
    for name in ("bsub", "bjobs", "sbatch", "squeue", "sacct", "srun"):
        launcher = tmp_path / "bin" / name
        assert os.access(launcher, os.X_OK)
        lines = launcher.read_text().splitlines()
        assert lines[0] == f"#!{sys.executable}"
        assert len(lines) <= 4 and PROGRAMS[name] in lines[-1]


def test_a_launcher_runs_its_module_main_with_the_arguments_and_exits_with_its_status(tmp_path):
    """The program gets argv without its own name, its output is complete although the interpreter's
    teardown is skipped, and its status (or SystemExit) is the process's."""
    (tmp_path / "fakeprog.py").write_text(
        "import sys\n"
        "def main(argv):\n"
        "    print('args', argv)\n"
        "    sys.stdout.write('x' * 100000)\n"
        "    if argv and argv[0] == 'exit':\n"
        "        raise SystemExit(int(argv[1]))\n"
        "    return 7\n")
    from xce.compat.install import install

    where, written = install(str(tmp_path / "bin"), {"fakeprog": "fakeprog", "gone": "xce.compat.no_such_program"})
    assert sorted(written) == ["fakeprog", "gone"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    r = subprocess.run([f"{where}/fakeprog", "-noheader", "a b"], capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 7
    assert r.stdout.startswith("args ['-noheader', 'a b']\n") and r.stdout.endswith("x" * 100000)
    r = subprocess.run([f"{where}/fakeprog", "exit", "255"], capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 255
    r = subprocess.run([f"{where}/gone"], capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "gone: not available" in r.stderr and "Traceback" not in r.stderr


def test_install_never_overwrites_a_real_lsf_or_slurm_command(tmp_path):
    real = tmp_path / "bin" / "bsub"
    real.parent.mkdir()
    real.write_text("#!/bin/sh\necho real LSF\n")
    r = xce("compat", "install", "--only-me", str(tmp_path / "bin"))
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "bsub" in r.stderr and "not written by XCE" in r.stderr
    assert real.read_text() == "#!/bin/sh\necho real LSF\n"
    assert sorted(p.name for p in real.parent.iterdir()) == ["bsub"]


def test_install_again_refreshes_only_what_changed(tmp_path):
    from xce.compat.install import install

    where, written = install(str(tmp_path))
    assert sorted(written) == sorted(LAUNCHERS)
    (tmp_path / "squeue").write_text((tmp_path / "squeue").read_text().replace(sys.executable, "/old/python"))
    (tmp_path / "sacct").unlink()
    assert sorted(install(str(tmp_path))[1]) == ["sacct", "squeue"]
    assert install(str(tmp_path))[1] == []


def test_path_prints_only_the_directory_and_installs_it_when_missing(tmp_path):
    where = tmp_path / "compat" / "bin"
    r = xce("compat", "path", env={"XCE_COMPAT_DIR": str(where)})
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{where}\n"
    assert sorted(p.name for p in where.iterdir()) == sorted(LAUNCHERS)
    # what a user's shell does with it: the commands are found first on PATH
    found = subprocess.run(["sh", "-c", 'PATH="$1:$PATH"; for c in bjobs sbatch; do command -v $c; done', "sh",
                            r.stdout.strip()], capture_output=True, text=True)
    assert found.stdout.split() == [str(where / "bjobs"), str(where / "sbatch")]


def test_install_into_a_directory_that_cannot_be_made_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    r = xce("compat", "install", "--only-me", str(tmp_path / "file" / "bin"))
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "cannot create" in r.stderr and "Traceback" not in r.stderr


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    sd = tmp_path_factory.mktemp("compatstate")
    (sd / "xce.toml").write_text('cluster_name = "lab7"\ndefault_queue = "short"\n\n'
                                 "[queues.short]\npriority = 40\n\n[queues.long]\npriority = 20\n")
    ctl = start_controller(sd, config=str(sd / "xce.toml"))
    yield ctl
    ctl.stop()


def _conf_values(text: str, sep: str = "=") -> dict[str, str]:
    pairs = (line.partition(sep) for line in text.splitlines() if sep in line and not line.startswith("#"))
    return {k.strip(): v.strip() for k, _, v in pairs}


def test_lsf_conf_writes_the_files_clients_read_from_the_clusters_settings(controller, tmp_path):
    env = {"XCE_STATE_DIR": str(controller.state_dir), "XCE_LSF_UNIT_FOR_LIMITS": "MB"}
    r = xce("compat", "lsf-conf", str(tmp_path / "lsf"), env=env)
    assert r.returncode == 0, r.stderr
    exports = dict(line.removeprefix("export ").split("=", 1) for line in r.stdout.splitlines()
                   if line.startswith("export "))
    assert set(exports) == {"LSF_ENVDIR", "LSF_CONFDIR", "LSB_SHAREDIR"}
    conf = _conf_values(Path(exports["LSF_ENVDIR"], "lsf.conf").read_text())
    assert conf["LSF_UNIT_FOR_LIMITS"] == "MB"
    assert conf["LSB_SHAREDIR"] == exports["LSB_SHAREDIR"] and conf["LSF_CONFDIR"] == exports["LSF_CONFDIR"]
    params = Path(exports["LSF_CONFDIR"], "lsbatch", "lab7", "configdir", "lsb.params").read_text()
    assert _conf_values(params)["DEFAULT_QUEUE"] == "short"
    events = Path(exports["LSB_SHAREDIR"], "lab7", "logdir", "lsb.events")
    assert events.read_text() == ""

    # the readers real clients use find the same values
    from dask_jobqueue.lsf import lsf_detect_units

    old = os.environ.get("LSF_ENVDIR")
    os.environ["LSF_ENVDIR"] = exports["LSF_ENVDIR"]
    try:
        assert lsf_detect_units() == "m"
    finally:
        os.environ.pop("LSF_ENVDIR") if old is None else os.environ.__setitem__("LSF_ENVDIR", old)


def test_lsf_conf_refuses_a_unit_lsf_does_not_have(controller, tmp_path):
    env = {"XCE_STATE_DIR": str(controller.state_dir), "XCE_LSF_UNIT_FOR_LIMITS": "MiB"}
    r = xce("compat", "lsf-conf", str(tmp_path / "lsf"), env=env)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "XCE_LSF_UNIT_FOR_LIMITS" in r.stderr
    assert not (tmp_path / "lsf").exists()


def test_lsf_conf_without_a_directory_writes_where_badmin_says_the_files_are(controller, tmp_path):
    """A client asks ``badmin showconf mbd`` for LSF_CONFDIR and LSB_SHAREDIR, then opens the files
    under them (the snakemake LSF plugin): by default they are where badmin says."""
    from xce.compat.install import install

    env = {"XCE_STATE_DIR": str(controller.state_dir)}
    r = xce("compat", "lsf-conf", env=env)
    assert r.returncode == 0, r.stderr
    where, _ = install(str(tmp_path / "bin"))
    shown = subprocess.run([f"{where}/badmin", "showconf", "mbd"], capture_output=True, text=True, timeout=60,
                           env={k: v for k, v in os.environ.items() if not k.startswith(("XCE_", "LSF_", "LSB_"))}
                           | env)
    assert shown.returncode == 0, shown.stderr
    conf = _conf_values("\n".join(shown.stdout.splitlines()[1:]))
    assert conf["LSF_UNIT_FOR_LIMITS"] == "KB"
    params = Path(conf["LSF_CONFDIR"], "lsbatch", "lab7", "configdir", "lsb.params")
    assert _conf_values(params.read_text())["DEFAULT_QUEUE"] == "short"
    assert Path(conf["LSB_SHAREDIR"], "lab7", "logdir", "lsb.events").exists()
    assert Path(controller.state_dir, "lsf") in params.parents


def test_every_client_name_of_both_systems_is_answered_by_xce(tmp_path):
    """Each LSF and Slurm client program name is either XCE's own program or says, in one line and
    exit 1, that XCE does not provide it: none may fall through to a real Slurm or LSF later on PATH
    (here a fake one that would print 'real scheduler')."""
    real = tmp_path / "real"
    real.mkdir()
    for name in (*LSF_CLIENTS, *SLURM_CLIENTS):
        (real / name).write_text("#!/bin/sh\necho real scheduler\n")
        (real / name).chmod(0o755)
    r = xce("compat", "install", "--only-me", str(tmp_path / "bin"))
    assert r.returncode == 0, r.stderr
    assert set(PROGRAMS) < set(LAUNCHERS) and set(LAUNCHERS) == {*LSF_CLIENTS, *SLURM_CLIENTS}
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{real}:{os.environ['PATH']}"}
    for name in sorted(set(LAUNCHERS) - set(PROGRAMS)):
        out = subprocess.run([name, "--help"], capture_output=True, text=True, env=env, timeout=30)
        assert out.returncode == 1 and out.stdout == "", (name, out)
        assert out.stderr.startswith(f"{name}: not provided by XCE (") and out.stderr.count("\n") == 1, out.stderr
    for name in PROGRAMS:
        assert LAUNCHERS[name] == PROGRAMS[name]
        assert "real scheduler" not in subprocess.run([name, "-h"], capture_output=True, text=True, env=env,
                                                      timeout=30).stdout


def test_what_other_users_cannot_reach_is_named():
    import shutil
    import tempfile

    from xce.compat.install import out_of_reach

    tmp_path = Path(tempfile.mkdtemp(prefix="xce-reach-"))  # under /tmp: pytest's own are 0700
    try:
        _reach_cases(tmp_path, out_of_reach)
    finally:
        shutil.rmtree(tmp_path)


def _reach_cases(tmp_path, out_of_reach):
    shared = tmp_path / "opt" / "xce"
    shared.mkdir(parents=True)
    (shared / "python").write_text("")
    for d in (tmp_path, tmp_path / "opt", shared):
        d.chmod(0o755)
    (shared / "python").chmod(0o755)
    assert out_of_reach([str(shared / "python")]) is None
    (tmp_path / "opt").chmod(0o700)
    assert out_of_reach([str(shared / "python")]) == \
        f"{tmp_path / 'opt'} is drwx------, so other users cannot reach {shared / 'python'}"
    (tmp_path / "opt").chmod(0o755)
    (shared / "python").chmod(0o700)
    assert "-rwx------" in out_of_reach([str(shared / "python")])


def test_install_refuses_launchers_other_users_could_not_run_unless_told(tmp_path):
    """This interpreter's reach decides: out of other users' reach (a Python under /root, 0700), the
    install says why and how to fix it and writes nothing; --only-me writes them anyway."""
    from xce.compat.install import out_of_reach

    why = out_of_reach()
    r = xce("compat", "install", str(tmp_path / "bin"))
    if why is None:
        assert r.returncode == 0, r.stderr
        return
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert why in r.stderr and "--only-me" in r.stderr and "/opt" in r.stderr
    assert not (tmp_path / "bin").exists()
    assert xce("compat", "install", "--only-me", str(tmp_path / "bin")).returncode == 0
