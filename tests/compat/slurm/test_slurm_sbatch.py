"""``sbatch`` against a live cluster: what it prints (and every client's parser of it), how Slurm's
options become the job, where the script comes from, where its output goes, and what it refuses."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.integration

SCRIPT = "#!/bin/sh\n#SBATCH -J fromscript\n#SBATCH -t 10\n#SBATCH --mem-per-cpu=100\necho args: \"$@\"\necho to-stderr >&2\n"


def submitted(slurm, *args: str, input: str | None = None, env: dict | None = None) -> int:
    r = slurm("sbatch", "--parsable", *args, input=input, env=env)
    assert r.code == 0, r.err
    assert re.fullmatch(r"\d+\n", r.out), r.out
    return int(r.out)


# -- what it prints ------------------------------------------------------------------------------

#: How workflow tools read sbatch's answer (front-ends.md 3.5): each must find the job's id.
PARSERS = {
    "digits": lambda out: re.search(r"\d+", out).group(0),
    "job N": lambda out: re.search(r"job (?P<id>[0-9]+)", out).group("id"),
    "line start": lambda out: next(m.group("id") for line in out.splitlines()
                                   if (m := re.match(r"Submitted batch job (?P<id>\S*)", line))),
    "last word": lambda out: out.split()[-1],
    "fourth word": lambda out: out.strip().split(" ")[3],
    "prefix": lambda out: re.search(r"(.*:\s*)?[Ss]ubmitted batch job\s+(\d+)", out).group(2),
}


def test_the_answer_is_slurms_line_and_every_client_parser_finds_the_job(slurm):
    r = slurm("sbatch", "--hold", "--wrap", "true")
    assert r.code == 0 and r.err == ""
    m = re.fullmatch(r"Submitted batch job (\d+)\n", r.out)
    assert m, r.out
    jobid = int(m.group(1))
    assert slurm.detail(jobid)["jobid"] == jobid
    for name, parser in PARSERS.items():
        assert parser(r.out) == str(jobid), name


def test_parsable_is_the_id_alone_and_with_clusters_id_semicolon_cluster(slurm):
    r = slurm("sbatch", "--parsable", "--hold", "--wrap", "true")
    assert r.code == 0 and re.fullmatch(r"\d+\n", r.out)
    for parse in (lambda o: o.strip().split(";")[0], lambda o: o.strip().split(":")[0]):
        assert parse(r.out).isdigit()
    r = slurm("sbatch", "--parsable", "--hold", "-M", "site", "--wrap", "true")
    jobid, cluster = r.out.strip().split(";")
    assert jobid.isdigit() and cluster == "site"


def test_an_array_answers_with_the_array_id(slurm):
    jobid = submitted(slurm, "--hold", "-a", "1-3%2", "--wrap", "true")
    job = slurm.job(f"{jobid}_1")
    assert job["array_id"] == jobid and job["array_limit"] == 2


# -- options as the job ----------------------------------------------------------------------------

#: What a job's ``options`` leave out because it is XCE's default.
OPTION_DEFAULTS = {"open_mode": "append"}


@pytest.mark.parametrize("args, expected", [
    (["-n", "2", "-c", "2", "-N", "1"], {"tasks": 4, "options": {"cpus_per_task": 2, "nodes": 1}}),
    (["--ntasks=3"], {"tasks": 3}),
    (["--cpus-per-task=2"], {"tasks": 2}),
    (["-N", "1", "-n", "2", "--mem=2G"], {"requests": {"mem": 2**30}}),  # per node, over its 2 slots
    (["-c", "2", "--mem-per-cpu=500"], {"requests": {"mem": 500 * 2**20}}),  # bare = MB
    (["-t", "90"], {"run_limit": 5400}),
    (["-t", "1:30"], {"run_limit": 90}),
    (["--time=0:45"], {"run_limit": 45}),
    (["-t", "2-0"], {"run_limit": 172800}),
    (["-t", "1-2:03:04"], {"run_limit": 93784}),
    (["-p", "normal,other"], {"queue": "normal"}),
    (["-J", "a (b) [c]: d*"], {"name": "a (b) [c]: d*"}),
    (["--job-n=short"], {"name": "short"}),  # a prefix, as getopt takes it
    (["--exclusive"], {"exclusive": True}),
    (["--signal=B:USR2@90"], {"options": {"warn_signal": "SIGUSR2", "warn_time": 90}}),
    (["--open-mode=append"], {"options": {"open_mode": "append"}}),
    (["--comment", "c", "--qos=q", "--mail-type=END", "--wckey", "w", "-L", "lic"],
     {"options": {"recorded": {"comment": "c", "qos": "q", "mail_type": "END", "wckey": "w", "licenses": "lic"}}}),
    (["-o", "out-%j.txt", "-e", "err.txt"], {"stderr": "err.txt"}),
])
def test_options_become_the_job(slurm, args, expected):
    jobid = submitted(slurm, "--hold", *args, "--wrap", "true")
    job = slurm.detail(jobid)
    for key, value in expected.items():
        if isinstance(value, dict):
            for k, v in value.items():
                assert job[key].get(k, OPTION_DEFAULTS.get(k)) == v, (key, k, job[key])
        else:
            assert job[key] == value, (key, job[key])


def test_defaults_output_in_the_submit_dir_truncated_named_after_the_script(slurm, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text(SCRIPT)
    jobid = submitted(slurm, "--hold", str(script))
    job = slurm.detail(jobid)
    assert job["name"] == "fromscript"
    assert job["stdout"] == f"slurm-{jobid}.out" and job["stderr"] is None  # stderr goes with stdout
    assert job["cwd"] == str(slurm.work)
    assert job["options"]["open_mode"] == "truncate"
    wrapped = slurm.detail(submitted(slurm, "--hold", "--wrap", "true"))
    assert wrapped["name"] == "wrap"


def test_the_command_line_wins_over_sbatch_lines_and_arguments_reach_the_script(slurm, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text(SCRIPT)
    jobid = submitted(slurm, "-J", "fromcli", str(script), "one", "two words")
    script.unlink()  # spooled: the file may go once sbatch returns
    job = slurm.wait_state(str(jobid), ("DONE", "EXIT"))
    detail = slurm.detail(jobid)
    assert job["state"] == "DONE" and detail["name"] == "fromcli"
    assert detail["run_limit"] == 600 and detail["requests"]["mem"] == 100 * 2**20  # from the script
    out = (slurm.work / f"slurm-{jobid}.out").read_text()
    assert out == "args: one two words\nto-stderr\n"


def test_array_elements_write_slurm_A_a_files(slurm):
    jobid = submitted(slurm, "-a", "1-2", "--wrap", "echo element $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID")
    for i in (1, 2):
        slurm.wait_state(f"{jobid}_{i}", ("DONE",))
        assert (slurm.work / f"slurm-{jobid}_{i}.out").read_text() == f"element {i} of {jobid}\n"


@pytest.mark.parametrize("args", [[], ["/dev/stdin"]])
def test_the_script_on_standard_input(slurm, args):
    jobid = submitted(slurm, *args, input="#!/bin/sh\n#SBATCH -o stdin-%j.out\necho from stdin\n")
    slurm.wait_state(str(jobid), ("DONE",))
    assert (slurm.work / f"stdin-{jobid}.out").read_text() == "from stdin\n"


# -- refusals --------------------------------------------------------------------------------------

NOT_A_SCRIPT = ("sbatch: error: This does not look like a batch script.  The first\n"
                "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
                "sbatch: error: For instance: #!/bin/sh\n")


@pytest.mark.parametrize("args, input, err", [
    (["--bogus", "x.sh"], None, "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n"),
    (["-y"], None, "sbatch: invalid option -- 'y'\nTry \"sbatch --help\" for more information\n"),
    (["--mem"], None, "sbatch: option '--mem' requires an argument\nTry \"sbatch --help\" for more information\n"),
    (["@noshebang"], None, NOT_A_SCRIPT),
    ([], "echo no interpreter line\n", NOT_A_SCRIPT),
    ([], "", "sbatch: error: Batch script is empty!\n"),
    (["does-not-exist.sh"], None, "sbatch: error: Unable to open file does-not-exist.sh\n"),
    (["--wrap", "true", "extra"], None, "sbatch: error: Script arguments not permitted with --wrap option\n"),
])
def test_what_sbatch_refuses_exits_1_with_its_message(slurm, args, input, err):
    if args == ["@noshebang"]:
        (slurm.work / "noshebang.sh").write_text("echo hi\n")
        args = ["noshebang.sh"]
    r = slurm("sbatch", *args, input=input)
    assert (r.code, r.out, r.err) == (1, "", err)


@pytest.mark.parametrize("args, fragment", [
    (["--deadline=now+1hour"], "--deadline: this cluster does not end pending jobs at a deadline"),
    (["--gpus=1", "-N", "2", "-n", "2"], "1 does not divide among 2"),  # of the job, over two hosts: refused
    (["--ntasks-per-gpu=2"], "--ntasks-per-gpu needs GPUs"),
    (["-t", "soon"], "invalid time 'soon'"),
    (["--test-only"], "--test-only"),
])
def test_what_cannot_be_honoured_is_refused_clearly(slurm, args, fragment):
    r = slurm("sbatch", *args, "--wrap", "true")
    assert r.code == 1 and r.out == ""
    assert r.err.startswith("sbatch: error: ") and fragment in r.err and len(r.err.splitlines()) == 1, r.err
    assert "Traceback" not in r.err


def test_a_per_node_gpu_request_with_tasks_that_divide_it_is_translated(slurm):
    """``--gpus-per-node=2 --ntasks-per-node=2``: one GPU per task, reserved per slot."""
    r = slurm("sbatch", "--parsable", "--hold", "-N", "1", "--ntasks-per-node=2", "--gpus-per-node=2",
              "--wrap", "true")
    assert r.code == 0, r.err
    assert slurm.detail(int(r.out))["requests"]["xce.io/gpu"] == 1


def test_gpus_per_node_over_more_slots_are_the_hosts_and_the_job_sees_them(slurm):
    """``-c 2 --gpus-per-node=1``: one GPU for the host's two slots, reserved once on the host."""
    jobid = submitted(slurm, "-c", "2", "--gpus-per-node=1", "--wrap", 'echo "gpus=$CUDA_VISIBLE_DEVICES"')
    assert slurm.wait_state(str(jobid), ("DONE", "EXIT"))["state"] == "DONE"
    assert slurm.detail(jobid)["sched_request"] == "span[hosts=1] rusage[xce.io/gpu=1/host]"
    out = (slurm.work / f"slurm-{jobid}.out").read_text()
    assert re.fullmatch(r"gpus=\d+\n", out), out


def test_help_and_version_exit_0(slurm):
    assert slurm("sbatch", "--help").code == 0
    r = slurm("sbatch", "--version")
    assert r.code == 0 and r.out.startswith("slurm ")


# -- the same option on the command line and in the script; shapes Slurm adjusts ------------------

@pytest.mark.parametrize("line", ["--get-user-env=L", "--hint=nomultithread", "--tmp=10G", "--threads-per-core=1",
                                  "--no-kill", "--uid=0"])
def test_an_option_the_command_line_takes_is_taken_as_a_directive(slurm, tmp_path, line):
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/sh\n#SBATCH {line}\ntrue\n")
    plain = tmp_path / "plain.sh"
    plain.write_text("#!/bin/sh\ntrue\n")
    in_script = slurm.detail(submitted(slurm, "--hold", str(script)))
    on_line = slurm.detail(submitted(slurm, "--hold", line, str(plain)))
    key = line[2:].partition("=")[0].replace("-", "_")
    assert in_script["options"]["recorded"][key] == on_line["options"]["recorded"][key]


def test_more_nodes_than_tasks_is_corrected_with_slurms_warning(slurm):
    r = slurm("sbatch", "--parsable", "-N", "2", "-n", "1", "--wrap", "true")
    assert r.code == 0 and r.err == "sbatch: warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"
    jobid = int(r.out)
    assert slurm.wait_state(str(jobid), ("DONE", "EXIT"))["state"] == "DONE"
    assert slurm.detail(jobid)["options"]["nodes"] == 1


def test_memory_per_node_without_nodes_runs_on_one_host(slurm):
    jobid = submitted(slurm, "-n", "2", "--mem=600", "--wrap", "echo $SLURM_NTASKS")
    job = slurm.wait_state(str(jobid), ("DONE", "EXIT"))
    detail = slurm.detail(jobid)
    assert job["state"] == "DONE" and len({h for h, _ in detail["placement"]}) == 1
    assert detail["requests"]["mem"] * 2 == 600 * 2**20  # --mem is per node: 600M on the one host


def test_export_none_gives_slurms_variables_and_the_hosts_login_path_not_the_workers(slurm):
    jobid = submitted(slurm, "--export=NONE", "--wrap", "echo PATH=$PATH; echo MINE=${MINE-unset}; "
                      "echo CONF=${SLURM_CONF-unset}", env={"MINE": "x", "SLURM_CONF": "/etc/slurm.conf"})
    slurm.wait_state(str(jobid), ("DONE",))
    out = (slurm.work / f"slurm-{jobid}.out").read_text().splitlines()
    from xce.worker.runner import DEFAULT_PATH

    assert out == [f"PATH={DEFAULT_PATH}", "MINE=unset", "CONF=/etc/slurm.conf"]


# -- --wait ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, code", [
    (["-W", "--wrap", "true"], 0),
    (["--wait", "--wrap", "exit 3"], 3),
    (["-W", "-a", "1-3", "--wrap", 'exit "$SLURM_ARRAY_TASK_ID"'], 3),  # an array: the highest
    (["-W", "--wrap", "kill -KILL $$"], 1),  # killed by a signal: 1
])
def test_wait_returns_when_the_job_has_ended_with_its_exit_code(slurm, args, code):
    r = slurm("sbatch", *args, timeout=120)
    assert (r.code, r.err) == (code, "")
    jobid = re.fullmatch(r"Submitted batch job (\d+)\n", r.out).group(1)
    assert all(j["state"] in ("DONE", "EXIT") for j in slurm.api().get("/v1/jobs", job=jobid, all="true")["jobs"])


def test_wait_with_parsable_prints_the_id_alone(slurm):
    r = slurm("sbatch", "--parsable", "--wait", "--wrap", "true", timeout=120)
    assert r.code == 0 and re.fullmatch(r"\d+\n", r.out) and r.err == ""
    assert slurm.job(r.out.strip())["state"] == "DONE"


def test_wait_in_the_script_is_refused_not_ignored(slurm):
    r = slurm("sbatch", input="#!/bin/sh\n#SBATCH --wait\ntrue\n")
    assert (r.code, r.out) == (1, "")
    assert r.err == "sbatch: error: standard input line 2: --wait: give it on sbatch's command line, not in the script\n"


def test_singleton_waits_for_the_earlier_jobs_of_its_name_and_user(slurm):
    """sbatch(1), --dependency=singleton: the job starts after any previously launched job of the same
    name and user has ended; one of another name is not waited for."""
    first = submitted(slurm, "-J", "hourly", "--hold", "--wrap", "true")
    other = submitted(slurm, "-J", "daily", "--hold", "--wrap", "true")
    second = submitted(slurm, "-J", "hourly", "--dependency=singleton", "--wrap", "true")
    alone = submitted(slurm, "-J", "weekly", "--dependency=singleton", "--wrap", "true")  # no namesake: runs
    assert slurm.wait_state(str(alone), ("DONE",))["state"] == "DONE"
    assert slurm.job(str(second))["state"] == "PEND"  # rounds ran since; it waits for the held namesake
    assert f"ended({first})" in str(slurm.detail(second)["pend_reasons"])
    assert slurm("scontrol", "release", str(first)).code == 0
    assert slurm.wait_state(str(second), ("DONE",))["state"] == "DONE"
    assert slurm("scancel", str(other)).code == 0
