"""A worker thread that dies takes the worker with it, so that its supervisor restarts it whole."""

from __future__ import annotations

import subprocess
import sys
import time

from xce.worker.agent import THREAD_DIED


def test_a_dead_thread_ends_the_process_with_its_status_and_says_why():
    program = ("import logging, threading, time\n"
               "from xce.worker.agent import _vital\n"
               "logging.basicConfig()\n"
               "def poster():\n"
               "    raise OSError(28, 'No space left on device')\n"
               "threading.Thread(target=_vital(poster, 'poster'), daemon=True).start()\n"
               "time.sleep(30)\n"
               "print('still alive')\n")
    started = time.monotonic()
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert r.returncode == THREAD_DIED == 70
    assert time.monotonic() - started < 20 and "still alive" not in r.stdout
    assert "the worker's poster thread died" in r.stderr and "No space left on device" in r.stderr
