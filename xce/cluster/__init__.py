"""Running a whole cluster on this machine: for ``xce up``, tests and benchmarks."""

from xce.cluster.local import ClusterError, LocalCluster

__all__ = ["ClusterError", "LocalCluster"]
