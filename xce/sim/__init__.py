"""Closed-loop simulation of workload traces through the production scheduling core.

``xce sim run`` reads a trace (:mod:`xce.sim.swf`), builds a simulated cluster
(:mod:`xce.sim.cluster_file`), drives the same ``SchedulerCore`` the scheduler process runs
(:mod:`xce.sim.engine`, placements kept packed by :mod:`xce.sim.placement`) and reports what
happened: metrics defined once (:mod:`xce.sim.metrics`), CSV and summary (:mod:`xce.sim.report`,
slot ids for Batsim's layout in :mod:`xce.sim.resources`), plots (:mod:`xce.sim.plots`, matplotlib
imported only there) and a self-contained HTML page (:mod:`xce.sim.html_report`).
The semantics are on one page: ``docs/simulation.md``.
"""

from xce.sim.cluster_file import SimCluster, load_cluster_file, uniform_cluster
from xce.sim.engine import SimResult, simulate
from xce.sim.swf import SwfTrace, read_swf

__all__ = ["SimCluster", "SimResult", "SwfTrace", "load_cluster_file", "read_swf", "simulate", "uniform_cluster"]
