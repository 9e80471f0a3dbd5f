"""The mail sender against a real sendmail-like program and a real SMTP server (issue 49): delivered,
and every failure one WARNING naming the job, the address and the reason, never an exception."""

from __future__ import annotations

import logging
import socket

from aiosmtpd.controller import Controller as SMTPServer

from xce.config.schema import MailSettings
from xce.mail.messages import Mail
from xce.mail.sender import MailSender


def _mail(jobid: int, to: str = "u@example.org") -> Mail:
    return Mail(jobid, to, f"Slurm Job_id={jobid} Name=x Ended, Run time 00:00:01, COMPLETED, ExitCode 0", "body\n")


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "xce.mail" and r.levelno == logging.WARNING]


def test_sendmail_gets_the_message_on_stdin_and_its_failure_is_one_warning(tmp_path, caplog):
    out = tmp_path / "out"
    ok = tmp_path / "sendmail"
    ok.write_text(f'#!/bin/sh\necho "$@" > {out}.args\ncat > {out}\n')
    bad = tmp_path / "badmail"
    bad.write_text("#!/bin/sh\necho 'no such user' >&2\nexit 67\n")
    for f in (ok, bad):
        f.chmod(0o755)
    sender = MailSender(MailSettings(sendmail=str(ok), from_address="XCE <xce@site.example>"))
    sender.submit([_mail(7)])
    sender.close(wait_s=10)
    text = out.read_text()
    assert (tmp_path / "out.args").read_text().split() == ["-t", "-oi"]
    assert "To: u@example.org\n" in text and "Subject: Slurm Job_id=7 Name=x Ended" in text and "\r" not in text
    caplog.set_level(logging.WARNING, "xce.mail")
    sender = MailSender(MailSettings(sendmail=str(bad)))
    sender.submit([_mail(8)])
    sender.close(wait_s=10)
    assert _warnings(caplog) == [f"mail for job 8 to u@example.org not sent: {bad} exited 67: no such user"]


class RefusesOne:
    def __init__(self) -> None:
        self.got: list[list[str]] = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        if address.startswith("nobody@"):
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        self.got.append(list(envelope.rcpt_tos))
        return "250 OK"


def test_a_refused_address_is_logged_and_the_rest_of_the_batch_is_delivered(caplog):
    caplog.set_level(logging.WARNING, "xce.mail")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    handler = RefusesOne()
    server = SMTPServer(handler, hostname="127.0.0.1", port=port)
    server.start()
    try:
        sender = MailSender(MailSettings(smtp_host="127.0.0.1", smtp_port=port))
        sender.submit([_mail(1, "nobody@example.org"), _mail(2), _mail(3)])
        sender.close(wait_s=10)
    finally:
        server.stop()
    assert handler.got == [["u@example.org"], ["u@example.org"]]
    [warning] = _warnings(caplog)
    assert warning.startswith("mail for job 1 to nobody@example.org not sent: ") and "no such user" in warning
