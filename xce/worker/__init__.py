"""The worker agent: one per host; measures the host, runs the jobs placed on it, reports what they use.

Modules: :mod:`measure` (host values), :mod:`runner` (job processes), :mod:`usage` (process-tree
usage), :mod:`jobstate` (what survives a worker restart), :mod:`agent` (talking to the controller).
"""
