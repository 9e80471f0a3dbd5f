"""What each bsub and sbatch option in a job script becomes: the exact fields of the job sent to
``POST /v1/jobs``, or the one line that refuses it. Read through the same function the real
``xce submit`` uses (``job_request``), without a server."""

from __future__ import annotations

import time

import pytest

from xce.cli import jobscript
from xce.cli.jobscript import Refused
from xce.cli.submit import SUBMIT, job_request
from xce.controller.web import models
from xce.core.resreq import parse_request
from xce.jobfiles import expand, values

ENV = {"HOME": "/home/ann", "PATH": "/usr/bin", "XCE_TOKEN": "secret"}
BASE = {"command": ["stdin"], "tasks": 1, "priority": 0, "job_type": "", "cwd": "/work",
        "env": {"HOME": "/home/ann", "PATH": "/usr/bin"}, "submit_host": "login1"}


def request(*lines: str, argv: tuple[str, ...] = (), environ: dict | None = None) -> dict:
    """The body for a script with these directive lines, given on standard input."""
    text = "#!/bin/sh\n" + "".join(line + "\n" for line in lines) + "echo hello\n"
    body = job_request(SUBMIT.parse(list(argv)), stdin=lambda: text.encode(), environ=environ or ENV,
                       cwd="/work", host="login1")
    assert body.pop("script") == text
    return body


def changes(body: dict) -> dict:
    """The fields that differ from a job without directives (None: the field is not sent)."""
    return {k: body.get(k) for k in {*body, *BASE} if body.get(k) != BASE.get(k)}


TRUNC = {"open_mode": "truncate"}  # a script with #SBATCH lines writes its files as sbatch does

ROWS = [
    # -- bsub ---------------------------------------------------------------------------------------
    ("#BSUB -J sweep", {"name": "sweep"}),
    ("#BSUB -J 'sweep[1-3]%2'", {"name": "sweep", "array": "1-3%2"}),
    ("#BSUB -q high", {"queue": "high"}),
    ("#BSUB -P cfd", {"project": "cfd"}),
    ("#BSUB -n 8", {"tasks": 8}),
    ("#BSUB -n 2,8", {"tasks": 8}),
    ("#BSUB -nnodes 2", {"nodes": 2, "tasks": 2, "exclusive": True}),
    ("#BSUB -R 'select[mem>4G] span[hosts=1]'", {"request": "select[mem>4G] span[hosts=1]"}),
    ("#BSUB -M 4000", {"limits": {"mem": 4000 * 1024}}),
    ("#BSUB -M 2GB", {"limits": {"mem": 2 << 30}}),
    ("#BSUB -W 1:30", {"run_limit": 5400}),
    ("#BSUB -We 10", {"recorded": {"estimated_run_time": "10"}}),
    ("#BSUB -o out.%J", {"stdout": "out.%J"}),
    ("#BSUB -oo out.%J", {"stdout": "out.%J", "open_mode": "truncate"}),
    ("#BSUB -e err.%J", {"stderr": "err.%J"}),
    ("#BSUB -eo err.%J", {"stderr": "err.%J", "open_mode": "truncate"}),
    ("#BSUB -cwd /scratch", {"cwd": "/scratch"}),
    ("#BSUB -env none", {"env": None}),
    ("#BSUB -env 'all, K=1,2'", {"env": {**BASE["env"], "K": "1,2"}}),
    ("#BSUB -env 'all, ~PATH'", {"env": {"HOME": "/home/ann"}}),
    ("#BSUB -env 'K=1, HOME'", {"env": {"K": "1", "HOME": "/home/ann"}}),  # without all: only those
    ("#BSUB -w 'done(12)'", {"depend": "done(12)"}),
    ("#BSUB -H", {"hold": True}),
    ("#BSUB -sp 5", {"priority": 5}),
    ("#BSUB -x", {"exclusive": True}),
    ("#BSUB -m 'hostA hostB+2 group1'", {"hosts": ["hostA", "hostB", "group1"]}),
    ("#BSUB -m 'hostA others'", {}),
    ("#BSUB -r", {"rerunnable": True}),
    ("#BSUB -rn", {}),
    ("#BSUB -wa USR1 -wt 5", {"warn_signal": "USR1", "warn_time": 300}),
    ("#BSUB -gpu num=2", {"requests": {"xce.io/gpu": 2}}),
    ("#BSUB -gpu 'num=1:mode=exclusive_process'", {"requests": {"xce.io/gpu": 1},
                                                   "recorded": {"gpu": "mode=exclusive_process"}}),
    ("#BSUB -gpu 'num=1:mode=shared:j_exclusive=yes:gmodel=A100'", {"requests": {"xce.io/gpu": 1}, "gpu_model": "A100",
                                                                    "recorded": {"gpu": "mode=shared:j_exclusive=yes"}}),
    ("#BSUB -n 4 -R 'span[hosts=1]' -gpu num=4", {"tasks": 4, "request": "span[hosts=1]",
                                                  "requests": {"xce.io/gpu": 1}}),
    ("#BSUB -n2 -qshort -R\"span[ptile=16]\"", {"tasks": 2, "queue": "short", "request": "span[ptile=16]"}),
    ("#BSUB -n 2 cores -q ignored", {"tasks": 2}),  # bsub's getopt stops at a word that is not an option
    ("#BSUB -G physics", {"recorded": {"user_group": "physics"}}),
    ("#BSUB -U resv1", {"recorded": {"reservation": "resv1"}}),
    ("#BSUB -app big", {"recorded": {"app": "big"}}),
    ("#BSUB -L /bin/bash", {"recorded": {"login_shell": "/bin/bash"}}),
    ("#BSUB -g /proj/a", {"recorded": {"job_group": "/proj/a"}}),
    ("#BSUB -u ann@example.com -B -N -Ne", {"recorded": {"mail_user": "ann@example.com", "mail_begin": "yes",
                                                         "mail_end": "yes", "mail_error": "yes"}}),
    # -- sbatch -------------------------------------------------------------------------------------
    ("#SBATCH -J sweep", {"name": "sweep", **TRUNC}),
    ("#SBATCH --job-name=a.b", {"name": "a.b", **TRUNC}),
    ("#SBATCH -o slurm-%j.out -e err-%A_%a", {"stdout": "slurm-%j.out", "stderr": "err-%A_%a", **TRUNC}),
    ("#SBATCH --output=o --error e", {"stdout": "o", "stderr": "e", **TRUNC}),
    ("#SBATCH -p short,long", {"queue": "short", **TRUNC}),
    ("#SBATCH -A cfd", {"project": "cfd", **TRUNC}),
    ("#SBATCH -t 0:90", {"run_limit": 90, **TRUNC}),
    ("#SBATCH --time=1-02:00", {"run_limit": 26 * 3600, **TRUNC}),
    ("#SBATCH -n 4", {"tasks": 4, **TRUNC}),
    ("#SBATCH -n4", {"tasks": 4, **TRUNC}),
    ("#SBATCH -N 2", {"nodes": 2, "tasks": 2, **TRUNC}),
    # with -N the hosts are given and the tasks spread evenly: no span besides (the API refuses both)
    ("#SBATCH -N 2 --ntasks-per-node=3", {"nodes": 2, "tasks": 6, **TRUNC}),
    ("#SBATCH -N 2 --ntasks-per-node=2 -c 4", {"nodes": 2, "tasks": 16, "cpus_per_task": 4, **TRUNC}),
    ("#SBATCH --ntasks-per-n=2", {"tasks": 2, "request": "span[ptile=2]", **TRUNC}),  # getopt's prefixes
    ("#SBATCH -c 4", {"tasks": 4, "cpus_per_task": 4, "request": "span[hosts=1]", **TRUNC}),
    ("#SBATCH -n 2 -c 3", {"tasks": 6, "cpus_per_task": 3, **TRUNC}),
    ("#SBATCH --mem=8G -c 4", {"tasks": 4, "cpus_per_task": 4, "requests": {"mem": 2 << 30}, "request": "span[hosts=1]", **TRUNC}),
    ("#SBATCH --mem=4000", {"requests": {"mem": 4000 << 20}, **TRUNC}),
    # without -N a per-node amount puts the tasks on one host, as Slurm's block distribution fills one
    ("#SBATCH -n 4 --mem=1G", {"tasks": 4, "request": "span[hosts=1]", "requests": {"mem": 256 << 20}, **TRUNC}),
    ("#SBATCH -n 2 -c 2 --mem=600", {"tasks": 4, "cpus_per_task": 2, "request": "span[hosts=1]",
                                     "requests": {"mem": 150 << 20}, **TRUNC}),
    ("#SBATCH -N 2 -n 1", {"nodes": 1, **TRUNC}),  # sbatch: "setting nnodes to 1"
    ("#SBATCH -c 2 --cpus-per-gpu=4 --gpus-per-task=2", {"tasks": 2, "cpus_per_task": 2, "requests": {"xce.io/gpu": 1},
                                                         "recorded": {"cpus_per_gpu": "4"}, "request": "span[hosts=1]", **TRUNC}),
    ("#SBATCH --gres=gpu:a100:2 -n 2", {"tasks": 2, "request": "span[hosts=1]", "gpu_model": "a100",
                                        "requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH --gres=gpu:a100", {"gpu_model": "a100", "requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH --gpus=a100:2 -n 2", {"tasks": 2, "gpu_model": "a100", "requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH --gpus-per-node=v100:1", {"gpu_model": "v100", "requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH -C 'intel&[ib|eth]'", {"constraint": "intel&[ib|eth]", **TRUNC}),
    ("#SBATCH --get-user-env=L", {"recorded": {"get_user_env": "L"}, **TRUNC}),
    ("#SBATCH -N 2 -n 8 --mem=16G", {"nodes": 2, "tasks": 8, "requests": {"mem": 4 << 30}, **TRUNC}),
    ("#SBATCH --mem=0", {"exclusive": True, **TRUNC}),
    ("#SBATCH -n 4 --mem-per-cpu=1G", {"tasks": 4, "requests": {"mem": 1 << 30}, **TRUNC}),
    ("#SBATCH --gpus=1 --mem-per-gpu=2G", {"requests": {"mem": 2 << 30, "xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH --gres=gpu:2 --ntasks-per-node=2", {"tasks": 2, "request": "span[ptile=2]",
                                                  "requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH --gpus=2 -n 2", {"tasks": 2, "requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH -G 2 -n 2", {"tasks": 2, "requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH --gpus-per-node=1", {"requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH --gpus-per-task=1 -n 3", {"tasks": 3, "requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH --cpus-per-gpu=1 --gpus-per-task=2", {"tasks": 2, "cpus_per_task": 2,
                                                    "requests": {"xce.io/gpu": 1}, "request": "span[hosts=1]", **TRUNC}),
    ("#SBATCH -a 1-3%2", {"array": "1-3%2", **TRUNC}),
    ("#SBATCH --array=5", {"array": "5", **TRUNC}),
    ("#SBATCH -d afterok:12", {"depend": "done(12)", **TRUNC}),
    ("#SBATCH -H", {"hold": True, **TRUNC}),
    ("#SBATCH -D /scratch", {"cwd": "/scratch", **TRUNC}),
    ("#SBATCH --chdir=/scratch", {"cwd": "/scratch", **TRUNC}),
    ("#SBATCH --export=NONE", {"env": None, **TRUNC}),
    ("#SBATCH --export=A=1,B=1,2", {"env": {"A": "1", "B": "1,2"}, **TRUNC}),
    ("#SBATCH --export=ALL,A=1", {"env": {**BASE["env"], "A": "1"}, **TRUNC}),
    ("#SBATCH --export=HOME", {"env": {"HOME": "/home/ann"}, **TRUNC}),
    ("#SBATCH --parsable -Q", TRUNC),
    ("#SBATCH --comment='nightly run'", {"recorded": {"comment": "nightly run"}, **TRUNC}),
    ("#SBATCH --signal=B:USR2@90", {"warn_signal": "USR2", "warn_time": 90, "warn_batch_only": True, **TRUNC}),
    ("#SBATCH --signal=USR1", {"warn_signal": "USR1", "warn_time": 60, **TRUNC}),
    ("#SBATCH --open-mode=append", {"open_mode": "append"}),
    ("#SBATCH --wckey=k", {"recorded": {"wckey": "k"}, **TRUNC}),
    ("#SBATCH -q high", {"recorded": {"qos": "high"}, **TRUNC}),
    ("#SBATCH --exclusive", {"exclusive": True, **TRUNC}),
    ("#SBATCH --requeue", {"rerunnable": True, **TRUNC}),
    ("#SBATCH --no-requeue", TRUNC),
    ("#SBATCH --reservation=r1", {"recorded": {"reservation": "r1"}, **TRUNC}),
    ("#SBATCH -M c2", {"recorded": {"clusters": "c2"}, **TRUNC}),
    ("#SBATCH -x n3,n[5-6]", {"exclude_hosts": ["n3", "n5", "n6"], **TRUNC}),
    ("#SBATCH -w node[01-03,7]", {"hosts": ["node01", "node02", "node03", "node7"], **TRUNC}),
    ("#SBATCH --nodelist=a,b", {"hosts": ["a", "b"], **TRUNC}),
    ("#SBATCH --nice=10", {"priority": -10, **TRUNC}),
    ("#SBATCH --nice", {"priority": -100, **TRUNC}),
    ("#SBATCH --mail-type=END --mail-user=ann@example.com",
     {"recorded": {"mail_type": "END", "mail_user": "ann@example.com"}, **TRUNC}),
    ("#SBATCH --time-min=10", {"recorded": {"time_min": "10"}, **TRUNC}),
    ("#SBATCH -L matlab:1", {"recorded": {"licenses": "matlab:1"}, **TRUNC}),
    ("#SBATCH --core-spec=1", {"recorded": {"core_spec": "1"}, **TRUNC}),
    ("#SBATCH --ntasks-per-core=1", {"recorded": {"ntasks_per_core": "1"}, **TRUNC}),
    ("#SBATCH --gpu-bind=closest", {"recorded": {"gpu_bind": "closest"}, **TRUNC}),
    ("#SBATCH --time=10 # a comment", {"run_limit": 600, **TRUNC}),
    # a relative working directory is under the submission directory (sbatch -D, bsub -cwd)
    ("#SBATCH -D ./run", {"cwd": "/work/run", **TRUNC}),
    ("#BSUB -cwd sub/../out", {"cwd": "/work/out"}),
    ("#SBATCH --chdir=.", {**TRUNC}),
    ("#SBATCH --tasks-per-node=2 -N 2", {"tasks": 4, "nodes": 2, **TRUNC}),  # sbatch's alias
    # a bare -R is a select string, also when another -R joins it (LSF merges them)
    ("#BSUB -R V100\n#BSUB -R 'rusage[mem=5M] span[hosts=1]'", {"request": "select[V100] rusage[mem=5M] span[hosts=1]"}),
    ("#BSUB -R 'hname!=a && hname!=b'\n#BSUB -R span[ptile=1]",
     {"request": "select[hname!=a && hname!=b] span[ptile=1]"}),
    # GPUs given two ways that agree (Slurm takes both): the per-task count is reserved
    ("#SBATCH -n 2 --gres=gpu:2 --gpus-per-task=1", {"tasks": 2, "request": "span[hosts=1]",
                                                      "requests": {"xce.io/gpu": 1}, **TRUNC}),
    ("#SBATCH -n 2 --gpus=2 --gpus-per-task=1", {"tasks": 2, "requests": {"xce.io/gpu": 1}, **TRUNC}),
    # GPUs that do not divide among a host's slots are reserved once per host
    ("#SBATCH -c 4 --gpus-per-node=1", {"tasks": 4, "cpus_per_task": 4, "request": "span[hosts=1] rusage[xce.io/gpu=1/host]",
                                        **TRUNC}),
    ("#BSUB -n 4 -R 'span[hosts=1]' -gpu num=1", {"tasks": 4, "request": "rusage[xce.io/gpu=1/host] span[hosts=1]"}),
    ("#SBATCH -c 8 --gpus-per-task=1", {"tasks": 8, "cpus_per_task": 8,
                                        "request": "span[hosts=1] rusage[xce.io/gpu=1/host]", **TRUNC}),
    ("#SBATCH -N 2 --ntasks-per-node=1 -c 4 --gres=gpu:2", {"tasks": 8, "cpus_per_task": 4, "nodes": 2, **TRUNC,
                                                           "request": "rusage[xce.io/gpu=2/host]"}),
    ("#SBATCH --cpus-per-gpu=2 --gpus=1", {"tasks": 2, "cpus_per_task": 2,
                                           "request": "span[hosts=1] rusage[xce.io/gpu=1/host]",
                                           **TRUNC}),
    # --ntasks-per-gpu: N tasks for each GPU asked for, or a GPU for every N tasks
    ("#SBATCH -N 1 --gpus-per-node=4 --ntasks-per-gpu=1 -c 2", {"tasks": 8, "cpus_per_task": 2, "nodes": 1,
                                                               "request": "rusage[xce.io/gpu=4/host]", **TRUNC}),
    ("#SBATCH -N 1 -n 4 --ntasks-per-gpu=2", {"tasks": 4, "nodes": 1, "request": "rusage[xce.io/gpu=2/host]", **TRUNC}),
    # one task's CPUs are on one host (Slurm never splits a task)
    ("#SBATCH -c 6", {"tasks": 6, "cpus_per_task": 6, "request": "span[hosts=1]", **TRUNC}),
    # LSF's GPU resources reserved in rusage[] are the job's GPUs
    ("#BSUB -R 'rusage[ngpus_excl_p=1]'", {"requests": {"xce.io/gpu": 1}}),
    ("#BSUB -R 'rusage[mem=2G:ngpus_shared=1]'", {"request": "rusage[mem=2G]", "requests": {"xce.io/gpu": 1}}),
]


@pytest.mark.parametrize("line,fields", ROWS, ids=[r[0] for r in ROWS])
def test_each_directive_becomes_these_fields(line, fields):
    assert changes(request(line)) == fields


REFUSED = [
    ("#BSUB -Zz", "standard input line 2: illegal option -- Z"),
    ("#BSUB -M 1.5X", 'standard input line 2: -M 1.5X: quantity "1.5X" for "mem": expected a number with an '
     "optional unit K, M, G, T or P (powers of 1024)"),
    ("#BSUB -gpu 'num=1:gvram=8G'", "standard input line 2: -gpu gvram=: Bad GPU requirement syntax (the keywords "
     "are num, gmodel, mode, j_exclusive, mps, aff, block, gpack, gvendor, gtile, gmem, glink, nvlink, mig)"),
    ("#BSUB -b 99:99", "standard input line 2: 99:99: Bad time specification"),
    ("#SBATCH --bogus=1", "standard input line 2: unrecognized option '--bogus'"),
    ("#SBATCH --nodel=a --n=1", "standard input line 2: option '--n' is ambiguous; possibilities: '--network' "
     "'--nice' '--no-kill' '--no-requeue' '--nodefile' '--nodelist' '--nodes' '--ntasks' '--ntasks-per-core' "
     "'--ntasks-per-gpu' '--ntasks-per-node' '--ntasks-per-socket'"),
    ("#SBATCH --nice 5", "standard input line 2: Invalid directive found in batch script: 5"),
    ("#SBATCH --wrap='echo hi'", "standard input line 2: --wrap: a job script cannot also give --wrap (sbatch "
     "refuses it too)"),
    ("#SBATCH --exclusive=user", "standard input line 2: --exclusive=user: this cluster shares hosts only between "
     "jobs of any user or none (plain --exclusive)"),
    ("#SBATCH --ntasks-per-gpu=1 --gpus-per-task=1", "--ntasks-per-gpu is not compatible with --gpus-per-task "
     "(as in sbatch)"),
    ("#SBATCH -N 1-4", "standard input line 2: --nodes: expected a host count such as 2 (a range MIN-MAX cannot "
     "be honoured here), got '1-4'"),
    ("#SBATCH -N 2 -n 3 --mem=8G", "--mem is memory per node, and the tasks of this job cannot be spread evenly "
     "over its nodes: give --mem-per-cpu, or a task count that --nodes divides"),
    ("#SBATCH -n 4 --gpus=2", "2 GPU(s) of the job over 4 slots of the job: this cluster reserves them per slot "
     "(CPU), and 2 does not divide among 4 (ask for a multiple of that many GPUs, or as many slots as GPUs)"),
    ("#SBATCH -n 2 --gres=gpu:4 --gpus-per-task=1", "GPUs per node (4) and --gpus-per-task 1 over 2 task(s) per "
     "node ask for different GPUs; give one of them"),
    ("#SBATCH -n 2 --gpus=3 --gpus-per-task=1", "--gpus 3 and --gpus-per-task 1 over 2 task(s) ask for different "
     "GPUs; give one of them"),
    ("#SBATCH --gres=gpu:a100:1,gpu:v100:1", "--gres: GPUs of several models (a100, v100); a job's GPUs are of "
     "one model"),
    ("#XCE --gpu-model v100\n#SBATCH --gpus=a100:1", "the GPU model is given twice, differently (--gpu-model v100, "
     "--gpus a100); a job's GPUs are of one model"),
    ("#SBATCH --gres=license:2", "--gres 'license:2': Invalid generic resource (gres) specification (this cluster "
     "has only gpu; other resources are reserved with --request NAME=QTY)"),
    ("#SBATCH --mem=1G --mem-per-cpu=1G", "--mem, --mem-per-cpu and --mem-per-gpu exclude each other (as in "
     "sbatch); give one"),
    ("#SBATCH --signal=USR1@soon", "--signal 'USR1@soon': expected [B:]SIG[@SECONDS], e.g. B:USR2@90"),
    ("#BSUB -wa USR1", "give --warn-signal (bsub -wa) and --warn-time (bsub -wt) together"),
    ("#BSUB -R 'select[a>1] order[ut]'\n#BSUB -R 'order[mem]'",
     "-R: two different order[] (ut and mem); a job has one order"),
    ("#BSUB -R 'rusage[mem=1G]'\n#BSUB -R 'rusage[mem=2G]'",
     "-R: rusage[mem] is given twice with different amounts (1G and 2G); give it once"),
    ("#BSUB -R '2*{select[a>1]}'\n#BSUB -R 'select[b>1]'", "-R '2*{select[a>1]}': only requirements made of "
     "select[], order[], rusage[] and span[] can be combined with another -R (give one -R for a compound "
     "requirement)"),
    ("#SBATCH -w 'n[1-2]x[3]'", "host list 'n[1-2]x[3]': expected NAME[RANGES], e.g. node[1-3,5] (one bracket)"),
]


@pytest.mark.parametrize("line,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_what_cannot_be_honoured_is_refused_in_one_line(line, message):
    with pytest.raises(Refused) as err:
        request(line)
    assert str(err.value) == message and "\n" not in str(err.value)


def test_begin_times_are_read_as_each_system_writes_them():
    before = time.time()
    for line in ("#SBATCH --begin=now+5minutes", "#SBATCH --begin=now+300"):
        begin = request(line)["begin_time"] / 1e9
        assert before + 299 <= begin <= time.time() + 301, line


def test_several_r_are_merged_into_one_requirement_the_core_reads():
    body = request("#BSUB -R 'select[mem>1G] rusage[mem=1G]'", "#BSUB -R 'select[ncpus>=2] span[hosts=1]'",
                   "#BSUB -R 'rusage[example.com/lic=1] order[ut]'", "#BSUB -n 2")
    assert body["request"] == ("select[(mem>1G) && (ncpus>=2)] order[ut] rusage[mem=1G:example.com/lic=1] "
                               "span[hosts=1]")
    (primary,) = parse_request(body["request"], 2).primaries
    assert primary.rusage == (("mem", 1 << 30), ("example.com/lic", 1)) and primary.span_hosts == 1
    assert primary.select_names() == ("mem", "ncpus")
    # with --ntasks-per-node, its span joins the written one; the same span twice is one span
    body = request("#XCE -R 'select[mem>1G] span[ptile=2]'", "#SBATCH --ntasks-per-node=2")
    assert body["request"] == "select[mem>1G] span[ptile=2]"
    parse_request(body["request"], 2)


def test_the_command_line_wins_and_repeatable_lines_add_up():
    body = request("#BSUB -q low -n 2 -R 'select[a>1]'", "#BSUB -q mid -R 'select[b>1]'", "#SBATCH --export=A=1",
                   "#XCE --env B=2", argv=("-q", "high", "--record", "x=y"))
    assert (body["queue"], body["tasks"], body["request"]) == ("high", 2, "select[(a>1) && (b>1)]")
    assert body["env"] == {"A": "1", "B": "2"} and body["recorded"] == {"x": "y"}
    body = request("#BSUB -R 'select[a>1]'", argv=("-R", "select[c>1]"))
    assert body["request"] == "select[c>1]"


def test_the_whole_environment_goes_but_the_token():
    assert request()["env"] == {"HOME": "/home/ann", "PATH": "/usr/bin"}
    body = request(argv=("--env", "none,A=1", "--env", "PATH", "--env", "XCE_TOKEN"))
    assert body["env"] == {"A": "1", "PATH": "/usr/bin"}  # the token is not copied even when named
    body = request(argv=("--env", "XCE_TOKEN=given"))
    assert body["env"]["XCE_TOKEN"] == "given"


def test_an_environment_too_big_is_refused_with_what_to_do():
    many = {f"V{i}": "x" for i in range(models.MAX_ENV + 1)}
    with pytest.raises(Refused) as err:
        request(environ=many)
    assert str(err.value) == (f"the environment has {models.MAX_ENV + 1} variables, more than the {models.MAX_ENV} "
                              "a job may carry: use --env none plus the variables the job needs, or leave some out "
                              "with --env ~NAME")
    big = {"A": "x" * 60000, "B": "y" * 60000, "C": "z" * 60000, "D": "w" * 60000, "E": "v" * 60000}
    with pytest.raises(Refused) as err:
        request(environ=big)
    assert str(err.value).startswith("the environment is 300005 characters, more than the 262144")
    assert request(environ=big, argv=("--env", "~A,~B"))["env"].keys() == {"C", "D", "E"}


def test_the_cli_bounds_are_the_apis():
    from xce.cli import submit

    assert (submit.MAX_SCRIPT_BYTES, submit.MAX_ENV, submit.MAX_ENV_BYTES, submit.MAX_ARG_LEN) == (
        models.MAX_SCRIPT_BYTES, models.MAX_ENV, models.MAX_ENV_BYTES, models.MAX_ARG_LEN)


def _run(argv: list[str], stdin: bytes | None = None, cwd: str = "/work") -> dict:
    return job_request(SUBMIT.parse(argv), stdin=None if stdin is None else (lambda: stdin), environ=ENV, cwd=cwd,
                       host="login1")


def test_what_runs_a_script_a_shell_line_or_a_command(tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#BSUB -J fromfile\necho $1\n")
    body = _run([str(script), "a b"])
    assert (body["command"], body["script"], body["name"]) == ([str(script), "a b"], script.read_text(), "fromfile")
    body = _run(["echo a; echo b"])
    assert body["command"] == ["/bin/sh", "-c", "echo a; echo b"] and "script" not in body
    body = _run(["echo", "a b"])
    assert body["command"] == ["echo", "a b"] and "script" not in body
    spaced = tmp_path / "my job"
    spaced.write_text("echo plain\n")  # a file is run as a program, even with a space in its name
    assert _run([str(spaced)])["command"] == [str(spaced)]
    body = _run(["--wrap", "hostname; date"])
    assert (body["command"], body["script"]) == (["wrap"], "#!/bin/sh\nhostname; date\n")


def test_standard_input_is_read_only_without_a_command():
    def never() -> bytes:
        raise AssertionError("standard input was read although a command was given")

    job_request(SUBMIT.parse(["--", "true"]), stdin=never, environ=ENV, cwd="/w", host="h")
    with pytest.raises(Refused) as err:
        _run([], stdin=b"")
    assert str(err.value) == "no command given and standard input is empty: give a command or pipe a job script in"
    with pytest.raises(Refused) as err:
        _run([])
    assert str(err.value).startswith("missing COMMAND: give a command, a job script, or the script on standard input")


def test_scripts_too_large_or_not_text_are_refused(tmp_path):
    big = tmp_path / "big.sh"
    big.write_bytes(b"#!/bin/sh\n" + b"#" * models.MAX_SCRIPT_BYTES)
    with pytest.raises(Refused) as err:
        _run([str(big)])
    assert str(err.value) == (f"the job script {big} is larger than 4 MiB, the most a job may carry: keep the data "
                              "in a file the script reads")
    with pytest.raises(Refused) as err:
        _run([], stdin=b"#!/bin/sh\necho \xff\n")
    assert str(err.value) == "the job script on standard input is not UTF-8 text (byte 16)"


def test_lsf_unit_for_limits_sets_the_unit_of_m(monkeypatch):
    monkeypatch.setenv("LSF_UNIT_FOR_LIMITS", "MB")
    assert request("#BSUB -M 100")["limits"] == {"mem": 100 << 20}
    monkeypatch.setenv("LSF_UNIT_FOR_LIMITS", "XB")
    with pytest.raises(Refused, match="LSF_UNIT_FOR_LIMITS='XB' is not one of KB, MB, GB, TB, PB, EB"):
        request("#BSUB -M 100")
    assert jobscript.LSF_UNIT_FOR_LIMITS == "KB"


@pytest.mark.parametrize("pattern,element,expected", [
    ("%J.%I", False, "7.0"), ("%J.%I", True, "5.3"),
    ("slurm-%j.out", True, "slurm-7.out"), ("slurm-%A_%a.out", True, "slurm-5_3.out"),
    ("slurm-%A_%a.out", False, "slurm-7_4294967294.out"), ("%x-%u-%N-%n-%t", False, "fit-ann-node1-0-0"),
    ("%5j|%%j|100%|%q", False, "00007|%j|100%|%q"),
])
def test_output_file_names(pattern, element, expected):
    known = values(jobid=7, array_id=5 if element else None, index=3 if element else None, name="fit",
                   user="ann", host="node1.example.com")
    assert expand(pattern, known) == expected


def test_the_controllers_half_expansion_leaves_the_rest_to_the_worker():
    at_submit = values(jobid=7, name="a%Nb", user="ann")
    half = expand("%x.%N.%%N", at_submit, final=False)
    assert half == "a%%Nb.%N.%%N"
    assert expand(half, values(jobid=7, name="a%Nb", user="ann", host="n1")) == "a%Nb.n1.%N"
    assert values(jobid=7, command=["/home/ann/fit.sh"])["x"] == "fit.sh"


def test_an_lsf_time_out_of_range_is_refused_not_rolled_ahead():
    from xce.cli.spec import UsageError
    from xce.cli.submit import parse_begin

    for when in ("99:99", "24:00", "7:60", "0:12:00", "13:01:00:00"):
        with pytest.raises(UsageError):
            SUBMIT.parse(["-b", when, "true"])
    assert parse_begin("23:59", now=0) > 0 and parse_begin("12:31:23:59", now=0) > 0
