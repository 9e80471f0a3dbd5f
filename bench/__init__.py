"""Benchmarks: ``python -m bench`` (or ``make bench``) prints one JSON line per figure."""
