"""The worker actions' one definition: what the controller encodes is what a worker decodes, and an
action a worker cannot carry out exactly is refused with one line saying which field is wrong."""

from __future__ import annotations

import ast
import json
import pathlib

import pytest

import xce.protocol
from xce.protocol.actions import (
    KINDS,
    AttachKey,
    KillJob,
    ProtocolError,
    ResumeJob,
    SetRunLimit,
    SignalJob,
    StartJob,
    SuspendJob,
    decode,
    encode,
)

START = StartJob(jobid=7, run=1_700_000_000_000_000_000, user="ann", command=["./run.sh", "--fast"],
                 script="#!/bin/sh\necho hi\n", cwd="/home/ann", env={"A": "1"}, stdout="/tmp/o.7",
                 stderr=None, tasks=3, placement=[("n1", 2), ("n2", 1)], requests={"mem": 1 << 20},
                 limits={"pids": 64}, run_limit=90, process_limit=512, exclusive=True,
                 options={"interactive": False, "open_mode": "truncate"}, queue="short", project="p",
                 name="sweep", array_id=5, array_index=3, array=(1, 4, 4), env_families=["slurm"],
                 launch_key="ab" * 16, task_servers={"n1": "10.0.0.1:7000"})

EVERY_KIND = [START, KillJob(jobid=7, reason="killed by ann", grace_s=2.5), SuspendJob(jobid=7, reason="preempted"),
              ResumeJob(jobid=7, signal="SIGCONT", reason="resumed"), SignalJob(jobid=7, signal="SIGUSR1"),
              AttachKey(jobid=7, key="k" * 32, run=12), SetRunLimit(jobid=7, run_limit=0)]


def test_every_kind_is_in_the_table_and_survives_the_wire():
    assert sorted(type(a).kind for a in EVERY_KIND) == sorted(KINDS)
    for action in EVERY_KIND:
        wire = json.loads(json.dumps(encode(action)))
        # what the poll adds around an action (its id, when it was queued, the host) is not the action's
        assert decode(dict(wire, id=41, created=5, host="n1")) == action


def test_a_start_keeps_the_shape_workers_have_always_read():
    wire = encode(START)
    assert wire["kind"] == "start" and wire["jobid"] == 7 and set(wire) == {"kind", "jobid", "job"}
    assert wire["job"]["placement"] == [["n1", 2], ["n2", 1]] and wire["job"]["command"] == ["./run.sh", "--fast"]
    assert encode(KillJob(jobid=3, run=9, reason="x")) == {"kind": "kill", "jobid": 3, "run": 9, "reason": "x",
                                                           "signal": "SIGTERM", "grace_s": 10.0}
    assert wire["job"]["run"] == START.run  # a start's run is inside "job", as it always was


def test_a_field_with_a_default_may_be_left_out_and_means_what_its_absence_always_meant():
    assert decode({"kind": "kill", "jobid": 3}) == KillJob(jobid=3, reason="killed", grace_s=10.0)
    start = decode({"kind": "start", "jobid": 3, "job": {"jobid": 3, "user": "ann", "command": ["true"]}})
    assert start.tasks == 1 and start.placement == [] and start.stdout is None and start.env_families == ["lsf", "slurm"]


@pytest.mark.parametrize("message, error", [
    ({"kind": "reboot", "jobid": 1}, "unknown action kind 'reboot' (known: attach, kill, resume, run_limit, signal, "
                                     "start, suspend)"),
    ({"jobid": 1}, "unknown action kind None"),
    ({"kind": "signal", "jobid": 1}, "signal action: missing field 'signal'"),
    ({"kind": "attach", "key": "k"}, "attach action: missing field 'jobid'"),
    ({"kind": "start", "jobid": 1, "job": {"jobid": 1, "user": "ann"}}, "start action: missing field 'command'"),
    ({"kind": "start", "jobid": 1}, "start action: field 'job' must be an object, not NoneType None"),
    ({"kind": "kill", "jobid": "12"}, "kill action: field 'jobid' must be an integer, not str '12'"),
    ({"kind": "kill", "jobid": True}, "kill action: field 'jobid' must be an integer, not bool True"),
    ({"kind": "run_limit", "jobid": 1, "run_limit": 1.5}, "run_limit action: field 'run_limit' must be an integer"),
    ({"kind": "suspend", "jobid": 1, "signal": 19}, "suspend action: field 'signal' must be a string, not int 19"),
    ({"kind": "attach", "jobid": 1, "key": "k", "run": "now"}, "attach action: field 'run' must be an integer or null"),
    ({"kind": "start", "jobid": 1, "job": {"jobid": 1, "user": "ann", "command": ["a"], "placement": [["n1", "2"]]}},
     "start action: field 'placement' must be a list of [a string, an integer], not list [['n1', '2']]"),
    ({"kind": "start", "jobid": 1, "job": {"jobid": 1, "user": "ann", "command": ["a"], "env": {"A": 1}}},
     "start action: field 'env' must be an object of a string"),
    ({"kind": "start", "jobid": 2, "job": {"jobid": 1, "user": "ann", "command": ["a"]}},
     "start action: field 'jobid' is 2 outside 'job' and 1 inside"),
    (["kill", 1], "an action is a JSON object, not list"),
])
def test_an_action_that_is_not_exactly_one_kind_is_refused_in_one_line_naming_the_kind_and_field(message, error):
    with pytest.raises(ProtocolError) as caught:
        decode(message)
    assert str(caught.value).startswith(error) and "\n" not in str(caught.value)


def test_the_protocol_imports_neither_end_it_is_shared_by():
    """Below the controller and the worker: the standard library and xce's shared modules only."""
    root = pathlib.Path(xce.protocol.__file__).parent
    imported = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    reaching_up = sorted(m for m in imported if m.split(".")[:2] in (["xce", "controller"], ["xce", "worker"],
                                                                     ["xce", "scheduler"], ["xce", "cli"]))
    assert reaching_up == []
