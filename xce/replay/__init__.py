"""Replay files: record a core's inputs and outputs, read them back, verify a replay (Req 10 AC 9-16)."""

from xce.replay.reader import ReplayFileError, ReplayReader
from xce.replay.writer import ReplayWriter, record

__all__ = ["ReplayFileError", "ReplayReader", "ReplayWriter", "record"]
