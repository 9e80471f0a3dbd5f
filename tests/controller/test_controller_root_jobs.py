"""Root's submissions on a multi-user cluster: run as root where the site allows it, else refused at
submission with the reason (as LSF refuses root's bsub unless LSF_ROOT_USER=Y), never accepted and
then failing on every worker."""

from __future__ import annotations

import pytest
from controller_harness import Api, write_config

from xce.client.launch import start_controller

pytestmark = pytest.mark.integration


def _jobs(api: Api) -> list[dict]:
    return api("admin").get("/v1/jobs", params={"user": "all", "all": True}).json()["jobs"]


def test_roots_jobs_are_refused_at_submission_unless_allowed(tmp_path):
    ctl = start_controller(tmp_path / "off")
    api = Api(ctl)
    try:
        r = api("root").post("/v1/jobs", json={"command": ["id", "-un"]})
        assert r.status_code == 403, r.text
        assert r.json()["detail"] == ("root's jobs are not allowed on this cluster (allow_root_jobs = false in "
                                      "xce.toml): submit as an ordinary user")
        r = api("admin").post("/v1/jobs", json={"command": ["id", "-un"]})  # root's fallback on this host
        assert r.status_code == 403, r.text
        assert r.json()["detail"].startswith("the admin service token speaks for root, and root's jobs are not "
                                             "allowed on this cluster")
        assert _jobs(api) == []  # nothing half-applied
        assert api("ann").post("/v1/jobs", json={"command": ["true"]}).status_code == 201
    finally:
        api.close()
        ctl.stop()


def test_where_roots_jobs_are_allowed_root_and_the_admin_service_token_submit_as_root(tmp_path):
    (tmp_path / "on").mkdir()
    config = write_config(tmp_path / "on", "allow_root_jobs = true\n")
    ctl = start_controller(tmp_path / "on", config=str(config))
    api = Api(ctl)
    try:
        mine = api("root").post("/v1/jobs", json={"command": ["id", "-un"]})
        assert mine.status_code == 201, mine.text
        theirs = api("admin").post("/v1/jobs", json={"command": ["id", "-un"]})
        assert theirs.status_code == 201, theirs.text
        owners = {j["jobid"]: j["user"] for j in _jobs(api)}
        assert owners == {mine.json()["jobid"]: "root", theirs.json()["jobid"]: "root"}
    finally:
        api.close()
        ctl.stop()
