"""Job mail on a live cluster, delivered to a real SMTP server the test starts (issue 49).

``sbatch --mail-type`` and ``bsub -B -N -u`` mail what Slurm and LSF mail, once each, through the
relay of ``[mail]``; without ``[mail]`` nothing is sent, and a relay that cannot be reached costs a
WARNING line in the controller's log and nothing else: the job ends as it would have.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import socket
import subprocess
import sys
import threading
import time

import pytest
from aiosmtpd.controller import Controller as SMTPServer
from conftest import FAST, wait_for
from pgschema import fresh_schema

from xce.cluster import LocalCluster
from xce.compat.programs import PROGRAMS

pytestmark = pytest.mark.integration

LAUNCH = "import sys; from importlib import import_module; sys.exit(import_module(sys.argv[1]).main(sys.argv[2:]))"


class Inbox:
    """What the SMTP server received: (recipients, parsed message), in order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.got: list[tuple[list[str], email.message.EmailMessage]] = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's hook name
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.lock:
            self.got.append((list(envelope.rcpt_tos), msg))
        return "250 OK"

    def of(self, jobid: int) -> list[tuple[list[str], email.message.EmailMessage]]:
        with self.lock:
            return [(to, m) for to, m in self.got if f"Job_id={jobid} " in m["Subject"] or
                    m["Subject"].startswith(f"Job {jobid}:")]

    def wait(self, jobid: int, n: int, timeout: float = 20) -> list[tuple[list[str], email.message.EmailMessage]]:
        return wait_for(lambda: len(got := self.of(jobid)) >= n and got, timeout,
                        lambda: f"{n} mail(s) of job {jobid} (got {[m['Subject'] for _, m in self.of(jobid)]})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request, tmp_path_factory):
    """A cluster whose [mail] relay is an SMTP server of its own, on each store (the array's summary
    reads the other elements' rows)."""
    inbox = Inbox()
    server = SMTPServer(inbox, hostname="127.0.0.1", port=free_port())
    server.start()
    base = tmp_path_factory.mktemp("mail")
    (base / "work").mkdir()
    config = base / "xce.toml"
    config.write_text(f'[mail]\nsmtp_host = "127.0.0.1"\nsmtp_port = {server.port}\n'
                      'from_address = "XCE <xce@site.example>"\ndomain = "site.example"\n')
    with contextlib.ExitStack() as stack:
        db = stack.enter_context(fresh_schema()) if request.param == "postgresql" else None
        cluster = LocalCluster(base / "state", 1, 2, config=config, db=db, **FAST)
        stack.callback(server.stop)
        stack.callback(cluster.stop)
        cluster.start()
        yield Site(cluster, base / "work", config), inbox


class Site:
    def __init__(self, cluster: LocalCluster, work, config) -> None:
        self.cluster, self.work, self.config = cluster, work, config
        self.env = {k: v for k, v in cluster.env().items() if not k.startswith(("SLURM_", "LSB_", "LSF_"))}

    def __call__(self, prog: str, *args: str) -> str:
        r = subprocess.run([sys.executable, "-c", LAUNCH, PROGRAMS[prog], *args], env=self.env, cwd=self.work,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{prog} {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
        return r.stdout

    def sbatch(self, *args: str) -> int:
        return int(self("sbatch", "--parsable", "-o", "/dev/null", *args).strip())

    def bsub(self, *args: str) -> int:
        return int(self("bsub", "-o", "/dev/null", *args).split("<", 1)[1].split(">", 1)[0])

    def ended(self, jobid: int, timeout: float = 30) -> dict:
        return wait_for(lambda: (j := self.cluster.request("GET", f"/v1/jobs/{jobid}"))["state"] in ("DONE", "EXIT")
                        and j, timeout, f"job {jobid} to end")

    def reconfigure(self, text: str) -> None:
        self.config.write_text(text)
        self.cluster.request("POST", "/v1/admin/reconfig")


def test_mail_type_end_sends_one_message_with_the_job_id_and_state(site):
    s, inbox = site
    jobid = s.sbatch("--mail-type=END", "--mail-user=u@example.org", "-J", "fit", "--wrap", "true")
    assert s.ended(jobid)["state"] == "DONE"
    [(to, msg)] = inbox.wait(jobid, 1)
    assert to == ["u@example.org"] and msg["To"] == "u@example.org" and msg["From"] == "XCE <xce@site.example>"
    assert msg["Subject"].startswith(f"Slurm Job_id={jobid} Name=fit Ended, Run time ")
    assert msg["Subject"].endswith(", COMPLETED, ExitCode 0")
    body = msg.get_content()
    assert f"scontrol show job {jobid}" in body and "COMPLETED" in body
    time.sleep(0.5)
    assert len(inbox.of(jobid)) == 1
    # the job record and xce jobs -l show what was asked
    assert s.cluster.request("GET", f"/v1/jobs/{jobid}")["options"]["recorded"] == {
        "mail_type": "END", "mail_user": "u@example.org"}
    long = subprocess.run([sys.executable, "-m", "xce.cli.main", "jobs", "-l", str(jobid)], env=s.env, cwd=s.work,
                          capture_output=True, text=True, timeout=60).stdout
    assert "Mail: mail_type=END, mail_user=u@example.org" in long and "no effect here" not in long


def test_an_array_is_mailed_once_unless_it_asks_per_task(site):
    s, inbox = site
    whole = s.sbatch("--array=1-3", "--mail-type=END", "-J", "arr", "--wrap", "true")
    tasks = s.sbatch("--array=1-2", "--mail-type=END,ARRAY_TASKS", "-J", "arr", "--wrap", "true")
    ids = [j["jobid"] for j in s.cluster.request("GET", "/v1/jobs", user="all")["jobs"]
           if j.get("array_id") in (whole, tasks)]
    for jid in ids:
        s.ended(jid)
    summary = f"Slurm Array Summary Job_id={whole}_* ({whole}) Name=arr Ended, COMPLETED, ExitCode [0-0]"
    wait_for(lambda: sum(f"Job_id={tasks}_" in m["Subject"] for _, m in inbox.got) >= 2, 20, "the tasks' mail")
    time.sleep(0.5)
    assert [m["Subject"] for _, m in inbox.got if f"Job_id={whole}_" in m["Subject"]] == [summary]
    per_task = sorted(m["Subject"].split(" Name=")[0] for _, m in inbox.got if f"Job_id={tasks}_" in m["Subject"])
    assert per_task == [f"Slurm Array Task Job_id={tasks}_1 ({tasks})", f"Slurm Array Task Job_id={tasks}_2 ({tasks + 1})"]


def test_begin_and_end_are_two_messages_and_fail_mails_only_a_failure(site):
    s, inbox = site
    both = s.sbatch("--mail-type=BEGIN,END", "--wrap", "true")
    ok = s.sbatch("--mail-type=FAIL", "--wrap", "true")
    s.ended(both), s.ended(ok)
    subjects = [m["Subject"] for _, m in inbox.wait(both, 2)]
    assert "Began, Queued time" in subjects[0] and "Ended" in subjects[1]
    assert [to for to, _ in inbox.of(both)] == [[f"{s.env.get('USER') or _me()}@site.example"]] * 2
    bad = s.sbatch("--mail-type=FAIL", "--wrap", "exit 3")
    assert s.ended(bad)["state"] == "EXIT"
    [(_, msg)] = inbox.wait(bad, 1)
    subject = msg["Subject"]
    assert subject.startswith(f"Slurm Job_id={bad} Name=") and " Failed, Run time " in subject, subject
    assert subject.endswith(", FAILED, ExitCode 3"), subject
    assert inbox.of(ok) == []  # one sender delivers in order: the job that ended first would have been mailed first


def test_bsub_B_N_u_mails_dispatch_and_end_with_lsf_subjects(site):
    s, inbox = site
    jobid = s.bsub("-B", "-N", "-u", "ann@example.org", "-J", "lsfjob", "true")
    s.ended(jobid)
    got = inbox.wait(jobid, 2)
    assert [m["Subject"] for _, m in got] == [f"Job {jobid}: <lsfjob> in cluster <xce> Started",
                                             f"Job {jobid}: <lsfjob> in cluster <xce> Done"]
    assert all(to == ["ann@example.org"] for to, _ in got)
    assert "Successfully completed." in got[1][1].get_content()


def test_no_mail_configured_sends_nothing_and_an_unreachable_relay_only_logs(site):
    s, inbox = site
    before = len(inbox.got)
    s.reconfigure("")  # no [mail]: off
    quiet = s.sbatch("--mail-type=ALL", "--wrap", "true")
    assert s.ended(quiet)["state"] == "DONE"
    s.reconfigure(f'[mail]\nsmtp_host = "127.0.0.1"\nsmtp_port = {free_port()}\ntimeout_s = 2\n')
    lost = s.sbatch("--mail-type=END", "--wrap", "true")
    assert s.ended(lost)["state"] == "DONE"
    log = s.cluster.log_dir / "controller.log"
    line = f"mail for job {lost} to "
    warned = wait_for(lambda: [x for x in log.read_text().splitlines() if line in x], 20, "the warning")
    assert len(warned) == 1 and "WARNING" in warned[0], warned
    assert len(inbox.got) == before


def _me() -> str:
    import getpass

    return getpass.getuser()
