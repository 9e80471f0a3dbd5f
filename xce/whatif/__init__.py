"""What if: the cluster's own history (finished jobs, hosts, queues) as a workload and a cluster the
simulator reads, and ``xce whatif``, which runs it under the configuration in force and under another."""
