"""Delivering job mail off the controller's state-change path.

The controller hands over the mail of a transaction only once it has committed (nothing is sent
for a move that was rolled back), and :meth:`MailSender.submit` only puts it on a bounded queue:
one thread delivers, through an SMTP relay (``[mail] smtp_host``) or the local ``sendmail``
(``[mail] sendmail``, Slurm's ``MailProg``), so a slow or dead relay delays no request and no
scheduling round. A message that cannot be delivered (relay unreachable or refusing, sendmail
failing, the queue full) is logged once at WARNING with the job, the address and the reason, and
dropped: mail is a notification, never retried into a storm.

Delivery is at most once: the queue lives in the leading controller's memory, so what it still
held when that controller stopped is not sent by the next leader (the count is logged at stop).
"""

from __future__ import annotations

import email.policy
import logging
import queue
import smtplib
import socket
import subprocess
import threading
import time
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from xce.mail.messages import Mail

__all__ = ["MailSender"]

log = logging.getLogger("xce.mail")

#: The most messages sent over one SMTP connection before it is closed and a new one opened.
_BATCH = 100


class MailSender:
    """One delivery thread fed by a bounded queue; ``settings`` is ``[mail]`` (a reconfiguration
    replaces it, and the next message goes the new way)."""

    def __init__(self, settings: Any, capacity: int = 10_000) -> None:
        self.settings = settings
        self._queue: queue.Queue[Mail | None] = queue.Queue(maxsize=capacity)
        self._thread = threading.Thread(target=self._work, name="xce-mail", daemon=True)
        self._thread.start()

    def submit(self, mails: list[Mail]) -> None:
        """Queue ``mails``; never blocks, never raises (a full queue drops the mail, logged)."""
        for m in mails:
            try:
                self._queue.put_nowait(m)
            except queue.Full:
                log.warning("mail for job %s to %s not sent: the mail queue is full (%d waiting)",
                            m.jobid, m.to, self._queue.maxsize)

    def close(self, wait_s: float = 2.0) -> None:
        """Stop after what is queued, waiting up to ``wait_s``; say how many were left unsent."""
        try:
            self._queue.put_nowait(None)
        except queue.Full:
            pass
        self._thread.join(wait_s)
        left = self._queue.qsize() - (1 if self._thread.is_alive() else 0)
        if left > 0:
            log.warning("%d job mail(s) not sent: the controller stopped first", left)

    def _work(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < _BATCH:
                try:
                    m = self._queue.get_nowait()
                except queue.Empty:
                    break
                if m is None:
                    self._deliver(batch)
                    return
                batch.append(m)
            self._deliver(batch)

    def _deliver(self, batch: list[Mail]) -> None:
        """Send ``batch``, each failure logged with its message; one SMTP connection for all of it."""
        cfg = self.settings
        if cfg.sendmail:
            for m in batch:
                try:
                    _sendmail(cfg.sendmail, _message(m, cfg), cfg.timeout_s)
                except (OSError, subprocess.SubprocessError) as exc:
                    _warn(m, exc)
            return
        sent = 0
        try:
            with smtplib.SMTP(cfg.smtp_host, cfg.smtp_port, timeout=cfg.timeout_s) as smtp:
                for m in batch:
                    try:
                        smtp.send_message(_message(m, cfg))
                    except (smtplib.SMTPRecipientsRefused, smtplib.SMTPSenderRefused, smtplib.SMTPDataError) as exc:
                        _warn(m, exc)  # this message refused; the connection goes on
                    sent += 1
        except (OSError, smtplib.SMTPException) as exc:  # the relay itself: what was not yet handed over
            for m in batch[sent:]:
                _warn(m, exc)


def _warn(m: Mail, exc: BaseException) -> None:
    log.warning("mail for job %s to %s not sent: %s", m.jobid, m.to, str(exc) or type(exc).__name__,
                extra={"fields": {"job": m.jobid, "to": m.to, "subject": m.subject}})


#: Headers are not folded below RFC 5322's hard limit: the standard library folds a long subject
#: before its first word, which readers then show with a leading space and filters fail to match.
_POLICY = email.policy.SMTP.clone(max_line_length=998)


def _message(m: Mail, cfg: Any) -> EmailMessage:
    msg = EmailMessage(policy=_POLICY)
    msg["From"] = cfg.from_address or f"XCE <xce@{socket.getfqdn()}>"
    msg["To"] = m.to
    msg["Subject"] = m.subject
    msg["Date"] = formatdate(time.time(), localtime=True)
    msg["Message-ID"] = make_msgid("xce")
    msg.set_content(m.body)
    return msg


def _sendmail(path: str, msg: EmailMessage, timeout_s: float) -> None:
    """``sendmail -t -oi``: the recipients from the headers, a line with one dot is no end."""
    r = subprocess.run([path, "-t", "-oi"], input=msg.as_bytes(policy=_POLICY.clone(linesep="\n")),
                       capture_output=True, timeout=timeout_s)
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace").strip()
        raise subprocess.SubprocessError(f"{path} exited {r.returncode}" + (f": {err}" if err else ""))
