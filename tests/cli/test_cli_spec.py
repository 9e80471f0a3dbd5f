"""The one command declaration: what it parses, what it refuses (one line, exit 2), and that it is
the only parser, so ``--help``, completion and the command line cannot disagree."""

from __future__ import annotations

import subprocess
import sys

import pytest

from xce.cli import admin, main
from xce.cli.spec import Arg, Command, Group, HelpRequested, Opt, Program, UsageError
from xce.testing.cli import invoke

SUBMIT = main.XCE.child("submit")
JOBS = main.XCE.child("jobs")


def test_submit_options_end_at_the_first_command_word():
    kw = SUBMIT.parse(["-q", "high", "sleep", "10", "-q", "x"])
    assert kw["queue"] == "high" and kw["command"] == ["sleep", "10", "-q", "x"]
    kw = SUBMIT.parse(["--queue=high", "-n2", "--", "-x", "--help"])
    assert (kw["queue"], kw["tasks"], kw["command"]) == ("high", 2, ["-x", "--help"])


def test_every_submit_option_reaches_the_command():
    kw = SUBMIT.parse(["-q", "high", "-n", "4", "-R", "select[mem>4G]", "-P", "p", "--type", "t", "--priority", "-5",
                       "--request", "mem=4G", "--request", "example.com/gpu=1", "--limit", "mem=8G", "-o", "o.%J",
                       "-e", "e.%J", "--array", "3", "--cwd", "/tmp", "--env", "A=1", "--env", "B=2", "--rerunnable", "--json",
                       "-W", "1:30", "--time", "2-03:04:05", "--url", "http://h:1", "--token", "t", "--state-dir", "/s", "--", "a", "-b", "--c"])
    new = ("open_mode", "exclusive", "hosts", "exclude", "nodes", "cpus_per_task", "ntasks_per_node", "mem",
           "mem_per_cpu", "mem_per_gpu", "gpus", "gpus_per_node", "gpus_per_task", "gres", "cpus_per_gpu", "signal",
           "warn_signal", "warn_time", "wrap", "record", "interactive", "pty", "ntasks_per_gpu", "constraint",
           "gpu_model", "mail_type", "mail_user")  # issue 34's, 45's and 49's, unset
    flags = {"exclusive": False, "interactive": False, "pty": False}
    assert {k: kw.pop(k) for k in new} == {k: None for k in new} | flags
    assert kw == {"command": ["a", "-b", "--c"], "queue": "high", "tasks": 4, "request": ["select[mem>4G]"],
                  "project": "p", "job_type": "t", "priority": -5, "requests": ["mem=4G", "example.com/gpu=1"],
                  "limits": ["mem=8G"], "stdout": "o.%J", "stderr": "e.%J", "array": "3", "cwd": "/tmp",
                  "env": ["A=1", "B=2"], "name": None, "hold": False, "begin": None, "allow_pending_forever": False, "depend": None, "dependency": None, "rerunnable": True,
                  "as_json": True, "url": "http://h:1", "token": "t", "state_dir": "/s",
                  "run_limit": 5400, "time": ((2 * 24 + 3) * 60 + 4) * 60 + 5}


@pytest.mark.parametrize("flag,text,seconds", [
    ("-W", "90", 5400), ("-W", "1:30", 5400), ("-W", "0:01", 60),
    ("--time", "5", 300), ("--time", "0:03", 3), ("--time", "1:02:03", 3723), ("--time", "1-0", 86400),
    ("--time", "1-2:30", 95400),
])
def test_run_limits_read_as_bsub_and_sbatch_write_them(flag, text, seconds):
    key = "run_limit" if flag == "-W" else "time"
    assert SUBMIT.parse([flag, text, "--", "x"])[key] == seconds


@pytest.mark.parametrize("argv,message", [
    (["-W", "1:2:3", "--", "x"], "-W: invalid run limit '1:2:3' (expected MINUTES or HOURS:MINUTES"),
    (["-W", "0", "--", "x"], "-W: invalid run limit '0' (expected at least one minute)"),
    (["-W", "ten", "--", "x"], "-W: invalid run limit 'ten'"),
    (["--time", "1:2:3:4", "--", "x"], "--time: invalid time '1:2:3:4' (expected MINUTES"),
    (["--time", "0:00", "--", "x"], "--time: invalid time '0:00' (expected at least one second)"),
])
def test_bad_run_limits_are_one_line_usage_errors(argv, message):
    with pytest.raises(UsageError) as err:
        SUBMIT.parse(argv)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_defaults_and_interspersed_arguments():
    kw = JOBS.parse(["12", "-al", "13[2-4]", "-uall"])
    assert kw["jobids"] == ["12", "13[2-4]"] and kw["all_"] is True and kw["long"] is True and kw["user"] == "all"
    kw = JOBS.parse([])
    assert kw == {"jobids": None, "all_": False, "user": None, "queue": None, "state": None, "long": False,
                  "name": None, "view": None, "columns": None, "as_json": False, "url": None, "token": None, "state_dir": None}


@pytest.mark.parametrize("argv,message", [
    (["--array", "0", "--", "x"], "--array: array '0': expected 1 to 100000 elements"),
    (["--array", "1-5:2%", "--", "x"], "--array: array '1-5:2%': expected a limit of at least 1 after '%' at column 7"),
    (["-n", "x", "--", "y"], "-n: expected a whole number, got 'x'"),
    (["-q"], "-q needs a value (QUEUE)"),
    (["--json=1", "--", "x"], "--json takes no value (got '--json=1')"),
    (["--queu", "a", "--", "x"], "no such option: --queu (did you mean --queue?)"),
    (["-Z", "--", "x"], "no such option: -Z"),
])
def test_submit_usage_errors_name_the_problem(argv, message):
    with pytest.raises(UsageError) as err:
        SUBMIT.parse(argv)
    assert str(err.value) == message


def test_usage_errors_are_one_line_with_status_2():
    for argv, line in [
        (["jobs", "--bogus"], "xce jobs: no such option: --bogus (see 'xce jobs --help')\n"),
        (["jobs", "12[a]"], "xce jobs: JOB: job '12[a]': expected a number, found 'a' at column 4 (see 'xce jobs --help')\n"),
        (["modify", "1", "2"], "xce modify: unexpected argument '2' (see 'xce modify --help')\n"),
        (["nosuch"], "xce: no such command 'nosuch' (see 'xce --help')\n"),
        (["sbumit"], "xce: no such command 'sbumit' (did you mean submit?) (see 'xce --help')\n"),
        (["--bogus"], "xce: no such option: --bogus (options go after the command name) (see 'xce --help')\n"),
        (["sim", "run"], "xce sim run: missing option --workload FILE (see 'xce sim run --help')\n"),
        (["sim", "walk"], "xce sim: no such command 'walk' (see 'xce sim --help')\n"),
        (["controller", "--log-level", "loud"],
         "xce controller: --log-level: 'loud' is not one of: DEBUG, INFO, WARNING, ERROR "
         "(see 'xce controller --help')\n"),
    ]:
        r = invoke(main.XCE, argv)
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", line), argv


def test_help_anywhere_before_the_command_words():
    for argv in (["submit", "--help"], ["submit", "-q", "x", "-h"], ["jobs", "12", "--help"]):
        r = invoke(main.XCE, argv)
        assert r.exit_code == 0 and r.stdout.startswith(f"Usage: xce {argv[0]} [OPTIONS]"), argv
    r = invoke(main.XCE, ["submit", "--", "prog", "--help"])  # the job's own --help: not ours
    assert r.exit_code == 3 or "Usage:" not in r.stdout


def test_a_group_without_a_command_shows_its_commands_and_fails():
    r = invoke(main.XCE, ["sim"])
    assert r.exit_code == 2 and "Commands:\n  run " in r.stdout
    r = invoke(main.XCE, [])
    assert r.exit_code == 2 and "\n  submit " in r.stdout


def test_negatable_flags_consts_and_negative_numbers():
    seen = {}
    cmd = Command("x", "Test.", [
        Arg("n", int, help="A number."),
        Opt("check", ("--check",), bool, True, negate=("--no-check",)),
        Opt("state", ("-r",), const="RUN"), Opt("state", ("-p",), const="PEND"),
        Opt("words", ("-w",), multiple=True),
    ], lambda **kw: seen.update(kw))
    assert cmd.parse(["-5"]) == {"n": -5, "check": True, "state": None, "words": None}
    assert cmd.parse(["--no-check", "-r", "1", "-p", "-wa", "-w", "b"]) == {
        "n": 1, "check": False, "state": "PEND", "words": ["a", "b"]}
    assert cmd.invoke(["--check", "7"]) == 0 and seen["n"] == 7


def test_declarations_are_checked():
    with pytest.raises(ValueError, match="declared twice"):
        Command("x", "", [Opt("a", ("-a",)), Opt("b", ("-a",))], print)
    with pytest.raises(ValueError, match="only the last argument"):
        Command("x", "", [Arg("a", many=True), Arg("b")], print)
    with pytest.raises(ValueError, match="is not -X or --long"):
        Opt("a", ("-ab",))
    with pytest.raises(ValueError, match="two parameters named"):
        Command("x", "", [Opt("a", ("-a",)), Arg("a")], print)


def test_every_command_is_declared_and_documented():
    """Each line of COMMANDS names a module that declares that command, with examples in --help."""
    for program in (main.XCE, admin.XCEADMIN):
        for name in program.modules:
            node = program.child(name)
            assert node is not None, (program.name, name)
            stack = [(f"{program.name} {name}", node)]
            while stack:
                prog, node = stack.pop()
                r = invoke(program, [*prog.split()[1:], "--help"])
                assert r.exit_code == 0 and "Examples:" in r.stdout, (prog, r.output)
                if isinstance(node, Group):
                    stack += [(f"{prog} {n}", c) for n, c in node.children().items()]


def test_no_option_offers_an_empty_choice():
    """``xce controller --help`` listed ``[one of: , text, json]``: a choice nobody can type sensibly."""
    for program in (main.XCE, admin.XCEADMIN):
        stack = list(program.children().values())
        while stack:
            node = stack.pop()
            if isinstance(node, Group):
                stack += node.children().values()
                continue
            for opt in node.params:
                assert "" not in (getattr(opt, "choices", None) or ()), (node.name, opt.name)
    r = invoke(main.XCE, ["controller", "--help"])
    assert "[one of: text, json]" in " ".join(r.stdout.split()), r.stdout  # however wide the terminal


def test_group_help_lists_subcommands():
    r = invoke(admin.XCEADMIN, ["scheduler", "record", "--help"])
    assert r.exit_code == 0
    assert "  start  Snapshot, then record" in r.stdout and "  stop   Stop recording" in r.stdout


def test_version():
    r = invoke(main.XCE, ["--version"])
    assert r.exit_code == 0 and r.stdout.startswith("xce 0.")


def test_a_program_loads_only_the_module_it_needs():
    loaded = []
    prog = Program("t", "Test.", {"hosts": "xce.cli.cluster", "drift": "xce.cli.drift"})
    prog._load = lambda module, _orig=prog._load: (loaded.append(module), _orig(module))[1]
    assert invoke(prog, ["hosts", "--help"]).exit_code == 0
    assert loaded == ["xce.cli.cluster"]
    assert isinstance(prog.child("hosts"), Command) and "load" not in prog.children()
    with pytest.raises(HelpRequested):
        prog.child("hosts").parse(["--help"])


HEAVY = ("fastapi", "sqlalchemy", "uvicorn", "numpy", "xce.core", "typer", "click", "httpx", "pydantic", "rich",
         "starlette", "http", "email", "urllib", "argparse", "typing", "dataclasses", "inspect", "socket", "ssl",
         "json", "re", "enum")  # json compiles regular expressions at import: xce.wirejson instead


@pytest.mark.parametrize("argv", [["jobs", "--json"], ["submit", "--json", "--", "true"], ["kill", "1"]])
def test_client_commands_import_almost_nothing(argv, tmp_path):
    # unreachable on purpose: the imports happen before any network I/O, and exit code 3 proves the command ran
    code = ("import sys\nbefore = set(sys.modules)\nsys.argv = ['xce'] + sys.argv[1:]\n"
            "from xce.cli.main import XCE\ncode = XCE.run(sys.argv[1:])\n"
            f"heavy = sorted(m for m in set(sys.modules) - before if m.split('.')[0] in {HEAVY!r}"
            " or m.startswith('xce.core'))\n"
            "print(code, heavy)")
    env = {"XCE_URL": "http://127.0.0.1:9", "XCE_TOKEN": "t", "PATH": "/usr/bin:/bin", "XCE_RETRY_S": "0"}
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.strip() == "3 []", out.stdout + out.stderr


def test_quick_exit_still_flushes_everything(tmp_path):
    """The client commands end with os._exit: what they printed must arrive and their exit status must
    be the real one (tests/cli/test_cli_commands.py reads their larger outputs through pipes)."""
    env = {"XCE_URL": "http://127.0.0.1:9", "XCE_TOKEN": "t", "PATH": "/usr/bin:/bin", "XCE_RETRY_S": "0.5"}
    out = subprocess.run([sys.executable, "-m", "xce.cli.main", "jobs"], capture_output=True, text=True, env=env,
                         timeout=60)
    refused = "xce: cannot reach the controller at http://127.0.0.1:9: Connection refused"
    assert out.returncode == 3 and out.stderr == f"{refused}; retrying for up to 0.5s (XCE_RETRY_S)\n{refused}\n"
