"""Host features, models and GPU models in the controller: what ``xce.toml`` gives a host counts before
it registers, what its worker registers with is kept across a restart, a constraint is folded into the
job's select and kept when the job is modified, and what no host can ever give is refused at
submission in Slurm's words unless the job may pend forever."""

from __future__ import annotations

import pytest
from test_controller_store import open_controller, submit

from xce.config.loader import ConfigError, load_config
from xce.controller.auth.tokens import Principal
from xce.controller.errors import FieldErrors
from xce.controller.hosts import fleet
from xce.controller.jobs import control
from xce.controller.web.models import ModifyRequest, RegisterRequest

CONFIG = """
[hosts.h1]
features = ["ib"]

[hosts.later]
features = ["bigmem"]
gpu_model = "h100"

[host_groups]
fast = ["h1", "later"]

[host_group_settings.fast]
features = ["nvme"]
model = "EPYC"
"""


def _controller(tmp_path, config: str = CONFIG):
    path = tmp_path / "xce.toml"
    path.write_text(config)
    return open_controller(tmp_path / "state", None, config_path=path)


def _refusal(ctl, **kw) -> str:
    with pytest.raises(FieldErrors) as refused:
        submit(ctl, **kw)
    return " | ".join(e["msg"] for e in refused.value.errors)


def test_the_configurations_features_count_before_the_host_registers_and_merge_with_the_workers(tmp_path):
    ctl = _controller(tmp_path)
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 2, "model": "flagged"}, load={},
                                            features=["gpu_node", "ib"]))
        values = ctl.host_values(ctl.hosts["h1"])
        assert values["features"] == ["gpu_node", "ib", "nvme"]  # the worker's, its group's, its own, once each
        assert values["model"] == "EPYC"  # the configuration wins over the worker's --model
        # "later" has not registered: its features and GPU model count already.
        assert submit(ctl, constraint="bigmem&nvme")["jobid"]
        assert submit(ctl, gpu_model="h100", requests={"xce.io/gpu": 1})["jobid"]
        assert "no host has feature skylake (features here: bigmem, gpu_node, ib, nvme)" in \
            _refusal(ctl, constraint="skylake")
        assert _refusal(ctl, constraint="ib&bigmem").startswith("Requested node configuration is not available")
    finally:
        ctl.close()


def test_registered_features_are_kept_across_a_controller_restart(tmp_path):
    ctl = _controller(tmp_path, "")
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 2}, load={}, features=["ib", "ib", "x1"]))
    finally:
        ctl.close()
    ctl = _controller(tmp_path, "")
    try:
        assert ctl.hosts["h1"].features == ("ib", "x1")
        job = ctl.job(submit(ctl, constraint="x1|ib")["jobid"])
        assert job["sched_request"] == "select[x1 || ib]"
    finally:
        ctl.close()


def test_a_worker_registering_a_feature_that_is_not_a_name_is_refused(tmp_path):
    ctl = _controller(tmp_path, "")
    try:
        with pytest.raises(FieldErrors) as refused:
            fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 1}, load={}, features=["ok", "no-go"]))
        (err,) = refused.value.errors
        assert err["loc"] == ["body", "features", 1] and "'no-go' is not a feature name" in err["msg"]
        assert "h1" not in ctl.hosts
    finally:
        ctl.close()


def test_a_gpu_job_on_a_cluster_without_gpus_is_refused_unless_it_may_pend_forever(tmp_path):
    ctl = _controller(tmp_path, "")
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 4}, load={}))
        with pytest.raises(FieldErrors) as refused:
            submit(ctl, requests={"xce.io/gpu": 1})
        assert refused.value.errors[0]["ctx"] == {"kind": "gres"}  # for a front-end that words it otherwise
        msg = _refusal(ctl, requests={"xce.io/gpu": 1})
        assert msg.startswith("Invalid generic resource (gres) specification: needs xce.io/gpu 1 but no host has "
                              "GPUs") and "--allow-pending-forever" in msg
        assert _refusal(ctl, gpu_model="a100").startswith("Invalid generic resource (gres) specification: no host "
                                                          "has GPUs of model 'a100' (GPU models here: none)")
        assert "no host has example.com/fpga" in _refusal(ctl, requests={"example.com/fpga": 1})
        jobid = submit(ctl, requests={"xce.io/gpu": 1}, gpu_model="a100", allow_pending_forever=True)["jobid"]
        assert ctl.job(jobid)["state"] == "PEND"
    finally:
        ctl.close()


def test_what_a_constraint_says_about_sets_of_hosts_is_refused_rather_than_approximated(tmp_path):
    ctl = _controller(tmp_path)
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 4}, load={}))
        assert "node counts (ib*2" in _refusal(ctl, constraint="ib*2", tasks=2)
        assert "supported only for a job on one host" in _refusal(ctl, constraint="[ib|nvme]", tasks=2)
        one = ctl.job(submit(ctl, constraint="[ib|nvme]", tasks=2, nodes=1)["jobid"])
        assert one["sched_request"] == "select[ib || nvme] span[hosts=1]"
        assert _refusal(ctl, constraint="ib&&nvme") == \
            "Invalid feature specification: expected a feature, '(' or '[', found '&' at column 4 in 'ib&&nvme'"
    finally:
        ctl.close()


def test_a_modified_job_keeps_its_constraint_and_gpu_model(tmp_path):
    ctl = _controller(tmp_path)
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 4, "xce.io/gpu": 2}, load={}))
        jobid = submit(ctl, constraint="ib", gpu_model="h100", requests={"xce.io/gpu": 1})["jobid"]
        control.modify(ctl, Principal("admin", "root"), jobid, ModifyRequest(request="select[ncpus >= 0]"))
        assert ctl.job(jobid)["sched_request"] == \
            'select[ncpus >= 0 && (ib && gpu_model == "h100")] rusage[xce.io/gpu=1]'
    finally:
        ctl.close()


def test_host_group_settings_name_groups_and_give_one_host_one_model(tmp_path):
    path = tmp_path / "xce.toml"
    path.write_text('[host_groups]\na = ["h1"]\nb = ["h1"]\n[host_group_settings.a]\nmodel = "X"\n'
                    '[host_group_settings.b]\nmodel = "Y"\n[host_group_settings.c]\nfeatures = ["f"]\n')
    with pytest.raises(ConfigError) as bad:
        load_config(path)
    text = str(bad.value)
    assert "host 'h1' is also in group 'a', which gives it model 'X'" in text
    assert "no group 'c' in [host_groups]" in text


def test_select_model_or_type_that_no_host_has_is_refused_naming_what_the_hosts_have(tmp_path):
    ctl = _controller(tmp_path, '[hosts.h2]\nmodel = "XEON"\n')
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 2, "type": "X86_64", "model": "EPYC"},
                                            load={}))
        # h2 is configured but has not registered: its type may be anything, its model is XEON.
        assert submit(ctl, request="select[model == XEON && type == ARM64]")["jobid"]
        assert 'no host has model "EPYC7" (models here: EPYC, XEON)' in _refusal(ctl, request="select[model==EPYC7]")
        assert submit(ctl, request="select[model == EPYC7 || model == EPYC]")["jobid"]  # one of them may match
        assert submit(ctl, request="select[model == EPYC7]", allow_pending_forever=True)["jobid"]
        fleet.register(ctl, RegisterRequest(name="h2", resources={"slots": 2, "type": "X86_64"}, load={}))
        assert 'no host has type "ARM64" (types here: X86_64)' in _refusal(ctl, request="select[type == ARM64]")
    finally:
        ctl.close()


def test_more_gpus_on_one_host_than_any_host_has_is_refused(tmp_path):
    ctl = _controller(tmp_path, "")
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 8, "xce.io/gpu": 4}, load={}))
        fleet.register(ctl, RegisterRequest(name="h2", resources={"slots": 8, "xce.io/gpu": 4}, load={}))
        # 2 GPUs per task, 4 tasks on one host: 8 there, where the largest host has 4 (8 in all would do).
        msg = _refusal(ctl, tasks=4, request="span[hosts=1]", requests={"xce.io/gpu": 2})
        assert msg.startswith("Requested node configuration is not available: needs xce.io/gpu 8, short by "
                              "xce.io/gpu 4 (for the 4 tasks one host must take; the largest host has 4)")
        assert "for one task" in _refusal(ctl, requests={"xce.io/gpu": 5})
        assert submit(ctl, tasks=4, request="span[ptile=2]", requests={"xce.io/gpu": 2})["jobid"]
    finally:
        ctl.close()
