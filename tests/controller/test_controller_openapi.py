"""The OpenAPI document describes what the API really does: schemathesis against a live controller.

Every operation is called with generated valid and invalid input and a valid token; a 5xx or a
status the document does not declare for that operation fails the test. The suite runs a short
budget; ``make fuzz-api`` runs the same for longer (``XCE_FUZZ_SECONDS``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from controller_harness import Api, write_config

from xce.client.launch import start_controller

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SECONDS = int(os.environ.get("XCE_FUZZ_SECONDS", "25"))
#: Long-polls would wait up to a minute for each generated call; their parameters are the same
#: cursors the other feed endpoints take, which are fuzzed.
LONG_POLLS = r"^/v1/(sched/(events|control)|workers/\{name\}/actions|workers/poll)$"


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    sd = tmp_path_factory.mktemp("fuzz")
    ctl = start_controller(sd, config=str(write_config(sd)))
    api = Api(ctl)
    try:
        yield ctl, api
    finally:
        api.close()
        ctl.stop()


def test_the_document_declares_bearer_auth_and_each_routes_refusals(live):
    ctl, api = live
    doc = httpx.get(ctl.url + "/openapi.json").json()
    assert doc["components"]["securitySchemes"]["HTTPBearer"] == {
        "type": "http", "scheme": "bearer", "description": doc["components"]["securitySchemes"]["HTTPBearer"]["description"]}
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert op.get("security") == [{"HTTPBearer": []}], (method, path)
            assert {"401", "403", "422"} <= set(op["responses"]), (method, path)
            if "{" in path:
                assert "404" in op["responses"], (method, path)
    jobs = doc["paths"]["/v1/jobs/{jobid}/kill"]["post"]["responses"]
    assert {"404", "409"} <= set(jobs)


def _schemathesis(ctl, token: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    exe = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"
    args = [exe, "run", f"{ctl.url}/openapi.json", "-H", f"Authorization: Bearer {token}",
            "--checks", "not_a_server_error,status_code_conformance", "--max-time", str(SECONDS),
            "--suppress-health-check", "all", "--request-timeout", "20", "--workers", "1",
            "--max-failures", "5", *extra]
    env = dict(os.environ, SCHEMATHESIS_HOOKS="", NO_COLOR="1")
    r = subprocess.run(args, capture_output=True, text=True, timeout=SECONDS * 3 + 120, env=env, cwd=out)
    return r


@pytest.mark.parametrize("who", ["user", "admin"])
def test_no_5xx_and_no_undocumented_status(live, tmp_path, who):
    ctl, api = live
    token = api.token_for("fuzzer") if who == "user" else ctl.token("admin")
    r = _schemathesis(ctl, token, tmp_path, "--exclude-path-regex", LONG_POLLS)
    assert r.returncode == 0, f"schemathesis found problems:\n{r.stdout[-6000:]}\n{r.stderr[-2000:]}"
    assert "passed" in r.stdout, r.stdout[-2000:]
    # the controller is still fine afterwards
    assert api("fuzzcheck").post("/v1/jobs", json={"command": ["true"]}).status_code == 201
