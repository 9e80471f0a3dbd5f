"""XCE: a cluster batch scheduler whose scheduling core is pure, deterministic and replayable."""

__version__ = "0.1.0"
