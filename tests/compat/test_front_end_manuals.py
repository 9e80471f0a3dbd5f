"""Each front-end's ``--help``/``-h``, its man page and what it does agree, because all come from the
one option table its parser reads: every option is listed, every one listed as refused is refused,
the pages render without a roff warning and ``man`` finds them where ``xce compat install`` puts them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from xce.compat.manual import of
from xce.compat.optable import REFUSE
from xce.compat.programs import LSF, PROGRAMS, SLURM

#: No controller answers here: a refusal must come before any request.
NOWHERE = {"XCE_URL": "http://127.0.0.1:9", "XCE_TOKEN": "none", "XCE_PATIENCE": "1"}


def run(prog: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_")}
    code = f"import sys; from {PROGRAMS[prog]} import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60,
                          input=stdin, env={**env, **NOWHERE})


@pytest.mark.parametrize("prog", [p for p in SLURM if not of(p).single_dash])
def test_slurm_help_is_the_usage_then_every_option(prog):
    r = run(prog, "--help")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    table = of(prog)
    lines = r.stdout.splitlines()
    assert lines[0] == table.usage and lines[0].startswith(f"Usage: {prog} ")
    for flag in table.flags:
        assert f"--{flag.name}" in r.stdout and (not flag.short or f"-{flag.short}, --{flag.name}" in r.stdout)
    assert len(table.flags) >= 10
    short = run(prog, "--usage")
    assert short.returncode == 0 and short.stdout == table.usage + "\n"


def test_sbatch_help_lists_its_options_as_sbatch_does():
    out = run("sbatch", "--help").stdout
    assert out.startswith("Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n")
    assert re.search(r"^  -p, --partition=partition +partition requested$", out, re.M)
    assert re.search(r"^      --wckey=wckey +.*\(kept with the job, no effect here\)$", out, re.M)
    assert re.search(r"^      --mail-user=user +who to send email notification for job state changes$", out, re.M)
    assert re.search(r"^      --bb=<spec> +.*\(refused here: burst buffers are not offered here\)$", out, re.M)
    assert len(out.splitlines()) > 100


def test_seff_help_is_the_contributed_scripts_and_names_every_option():
    r = run("seff", "-h")
    assert r.returncode == 0 and r.stdout.startswith("Usage: seff [Options] <Jobid>\n")
    for flag in of("seff").flags:
        assert re.search(rf"^ +-{flag.name} ", r.stdout, re.M), flag.name


@pytest.mark.parametrize("prog", LSF)
def test_lsf_h_prints_the_usage_and_every_option_on_stderr(prog):
    r = run(prog, "-h")
    assert r.returncode == 0 and r.stdout == ""
    table = of(prog)
    assert r.stderr.startswith(f"Usage: {prog} ")
    for flag in table.flags:
        assert re.search(rf"^  -{re.escape(flag.name)}\b", r.stderr, re.M), flag.name
    if table.flags:
        assert "\nOptions:\n" in r.stderr


def test_a_usage_error_still_prints_the_usage_alone():
    r = run("bjobs", "-Z")
    assert r.returncode == 255
    assert r.stderr.splitlines()[0] == "bjobs: illegal option -- Z"
    assert "Options:" not in r.stderr and r.stderr.splitlines()[1].startswith("Usage: bjobs ")


def _refused(prog: str) -> list[list[str]]:
    """A command line for each option the table says is refused."""
    table = of(prog)
    out = []
    for flag in table.flags:
        if not (flag.name in table.refused or flag.does == REFUSE or "(refused here" in flag.help):
            continue
        if table.system == "lsf":
            out.append([f"-{flag.name}", *(["x"] if flag.takes else []), *(["sleep", "1"] if prog == "bsub" else [])])
        else:
            out.append([f"--{flag.name}" + ("=1" if flag.takes else ""),
                        *(["--wrap=true"] if prog == "sbatch" else ["true"] if prog in ("srun", "salloc") else [])])
    return out


@pytest.mark.parametrize("prog", ["sbatch", "srun", "salloc", "squeue", "sacct", "scancel", "sattach", "bsub",
                                  "bjobs", "bkill", "lsload"])
def test_every_option_the_help_calls_refused_is_refused_before_anything_is_asked(prog):
    cases = _refused(prog)
    assert cases, f"{prog} refuses nothing?"
    for argv in cases:
        r = run(prog, *argv)
        assert r.returncode != 0, (argv, r.stdout)
        first = r.stderr.splitlines()[0] if r.stderr else ""
        assert "connect" not in first.lower() and "reach" not in first.lower(), (argv, r.stderr)
        assert first.startswith(f"{prog}: ") or first.startswith(argv[0]), (argv, r.stderr)


# -- man pages ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("man")
    done = subprocess.run([sys.executable, "-m", "xce.cli.manpage", str(out)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return out


def test_there_is_a_page_for_every_front_end_and_for_xce(pages):
    assert sorted(p.name for p in pages.iterdir()) == sorted([f"{n}.1" for n in PROGRAMS] + ["xce.1", "xceadmin.1"])


@pytest.mark.skipif(shutil.which("groff") is None or shutil.which("man") is None,
                    reason="groff-base and man-db are system packages (tools/system-packages.txt)")
@pytest.mark.parametrize("prog", [*PROGRAMS, "xce", "xceadmin"])
def test_each_page_renders_with_man_and_groff_without_a_warning(pages, prog):
    page = pages / f"{prog}.1"
    strict = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True, timeout=60)
    assert strict.returncode == 0 and strict.stderr == b"", strict.stderr.decode()
    shown = subprocess.run(["man", "--warnings", "-l", str(page)], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80"})
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    text = re.sub(".\b", "", shown.stdout)
    assert f"{prog.upper()}(1)" in text and "NAME" in text and "SEE ALSO" in text
    if prog in PROGRAMS:
        table = of(prog)
        assert "OPTIONS" in text
        for left, _ in table.rows():  # every option, as the help writes it
            assert left.split("=")[0].split(" ")[0] in text, left


@pytest.mark.skipif(shutil.which("man") is None, reason="man-db is a system package")
def test_compat_install_puts_the_pages_where_man_finds_them(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("XCE_") and k != "MANPATH"}
    bin_dir = tmp_path / "compat" / "bin"
    r = subprocess.run([sys.executable, "-m", "xce.cli.main", "compat", "install", "--only-me", str(bin_dir)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "Manual pages in" in r.stdout
    found = subprocess.run(["man", "-w", "sbatch"], capture_output=True, text=True, timeout=60,
                           env={**env, "PATH": f"{bin_dir}:{env['PATH']}"})
    assert found.stdout.strip() == str(tmp_path / "compat" / "share" / "man" / "man1" / "sbatch.1"), found.stderr
    by_manpath = subprocess.run(["man", "-w", "bjobs"], capture_output=True, text=True, timeout=60,
                                env={**env, "MANPATH": str(tmp_path / "compat" / "share" / "man")})
    assert by_manpath.stdout.strip().endswith("/man1/bjobs.1"), by_manpath.stderr


@pytest.mark.parametrize("prog", PROGRAMS)
def test_every_front_end_declares_its_options_with_a_help_line(prog):
    from xce.compat.manual import declared

    assert declared(prog), f"{prog} has no option table (xce/compat/slurm/tables.py or lsf/tables.py)"
    table = of(prog)
    assert table.summary and table.usage.startswith(f"Usage: {prog}")
    assert all(flag.help for flag in table.flags), [f.name for f in table.flags if not f.help]


def test_a_program_without_a_table_still_gets_a_page_from_its_module():
    """(a program merged before its table: its page and completion come from its getopt names)"""
    import types

    from xce.cli.manpage import render_front_end
    from xce.compat.manual import _undeclared

    module = types.ModuleType("sdemo")
    module.__doc__ = "``sdemo``: show a demonstration.\n\nMore."
    module.LONGS, module.SHORTS = {"jobs": 1, "noheader": 0}, {"j": "jobs", "h": "noheader"}
    table = _undeclared("squeue", module)
    assert table.summary == "show a demonstration"
    assert [table.left(f) for f in table.flags] == ["-j, --jobs=value", "-h, --noheader"]
    assert "\\-\\-noheader" in render_front_end(table)


@pytest.mark.parametrize("prog", [p for p in (*SLURM, *LSF) if p not in ("seff", "bsub", "sbatch")])
def test_the_parser_reads_the_table_the_help_prints(prog):
    """A module that declares its getopt names (or LSF flags) itself, beside its table, would let
    the help and the parser disagree: they must be the table's."""
    import importlib

    from xce.compat.slurm import tables as slurm

    module = importlib.import_module(PROGRAMS[prog])
    table = of(prog)
    if prog in ("srun", "salloc"):
        own = slurm.SRUN_OWN if prog == "srun" else slurm.SALLOC_OWN
        assert (module.EXTRA, module.SHORTS) == slurm.own_names(own)
    elif prog in SLURM:
        assert (module.LONGS, module.SHORTS) == table.getopt()
    elif hasattr(module, "FLAGS"):
        assert (module.FLAGS, getattr(module, "VALUED", frozenset())) == table.lsf()
