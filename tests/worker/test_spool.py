"""The spooled job script: run under its #! line as the kernel reads it, readable by its owner alone."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from xce.worker.spool import Spool, interpreter


@pytest.mark.parametrize("script, argv", [
    ("#!/bin/bash\narr=(a b c)\n", ["/bin/bash"]),
    ("#!/usr/bin/env python3\nprint(1)\n", ["/usr/bin/env", "python3"]),
    ("#! /bin/sh -e \n", ["/bin/sh", "-e"]),
    ("#!/usr/bin/env -S bash -l\n", ["/usr/bin/env", "-S bash -l"]),  # one argument: the rest of the line
    ("#!\t/bin/zsh\t-f\r\n", ["/bin/zsh", "-f"]),
    ("echo no interpreter line\n", ["/bin/sh"]),
    ("#!\n", ["/bin/sh"]),
    ("", ["/bin/sh"]),
    ("#BSUB -n 2\necho hi\n", ["/bin/sh"]),
])
def test_the_interpreter_is_read_as_the_kernel_reads_it(script, argv):
    assert interpreter(script) == argv


def test_a_script_runs_under_its_interpreter_whatever_the_mode_bits(tmp_path):
    spool = Spool(tmp_path / "spool", switch_users=False)
    argv = spool.argv(7, "#!/bin/bash\narr=(a b c)\necho ${arr[1]} \"$@\" $0\n", ["x", "y z"], os.getuid(),
                      os.getgid())
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert out == f"b x y z {spool.file(7)}\n"


def test_the_copy_is_the_owners_alone_in_a_directory_nobody_else_can_list_or_write(tmp_path):
    spool = Spool(tmp_path / "spool", switch_users=os.getuid() == 0)
    uid, gid = (65534, 65534) if os.getuid() == 0 else (os.getuid(), os.getgid())
    path = Path(spool.write(3, "#!/bin/sh\necho secret\n", uid, gid))
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, gid, 0o500)
    assert stat.S_IMODE(spool.path.stat().st_mode) == 0o711
    assert path.read_text() == "#!/bin/sh\necho secret\n"


def test_a_link_planted_where_the_copy_goes_is_not_followed(tmp_path):
    spool = Spool(tmp_path / "spool", switch_users=False)
    target = tmp_path / "precious"
    target.write_text("precious\n")
    spool.file(5).symlink_to(target)
    spool.write(5, "echo new\n", os.getuid(), os.getgid())
    assert target.read_text() == "precious\n"
    assert not spool.file(5).is_symlink() and spool.file(5).read_text() == "echo new\n"


def test_a_restarted_worker_keeps_only_the_scripts_of_the_jobs_it_adopted(tmp_path):
    spool = Spool(tmp_path / "spool", switch_users=False)
    for jobid in (1, 2, 3):
        spool.write(jobid, "true\n", os.getuid(), os.getgid())
    (spool.path / "notes.txt").write_text("not a script\n")
    spool.keep_only({2})
    assert sorted(p.name for p in spool.path.iterdir()) == ["job2.script", "notes.txt"]
