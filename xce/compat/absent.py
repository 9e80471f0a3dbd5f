"""What a client program of LSF or Slurm that XCE does not provide answers: one line that says so,
and exit 1, instead of the other scheduler's program (found later on PATH) failing with its own
configuration error."""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    prog = os.path.basename(sys.argv[0]) or "this command"
    sys.stderr.write(f"{prog}: not provided by XCE (this cluster's scheduler is XCE; `xce --help` lists what it "
                     f"offers, `ls $(xce compat path)` the LSF and Slurm commands it answers)\n")
    return 1
