"""``xce sim run`` on a damaged compressed trace: one line naming the file and what is wrong, exit 1,
no traceback (a gzip whose data is corrupt from its first block, an xz cut short)."""

from __future__ import annotations

import gzip
import lzma
import subprocess
import sys
from pathlib import Path

TRACE = Path(__file__).resolve().parents[2] / "examples" / "traces" / "lublin_256.swf"


def _sim(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xce.cli.main", "sim", "run", "--workload", str(path),
                           "--hosts", "4", "--slots-per-host", "4"], capture_output=True, text=True, timeout=120)


def test_corrupt_gzip_and_truncated_xz_are_one_line_errors(tmp_path):
    data = bytearray(gzip.compress(TRACE.read_bytes()))
    for i in range(200, 260):
        data[i] ^= 0x55
    corrupt = tmp_path / "corrupt.swf.gz"
    corrupt.write_bytes(bytes(data))
    cut = tmp_path / "cut.swf.xz"
    cut.write_bytes(lzma.compress(TRACE.read_bytes())[:3000])
    for path in (corrupt, cut):
        r = _sim(path)
        assert r.returncode == 1, r.stderr
        assert "Traceback" not in r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"xce sim run: {path}:"), r.stderr
        assert "corrupt or cut short" in lines[0]
