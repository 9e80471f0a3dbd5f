"""Resource names the shipped providers (:mod:`xce.providers`) report: a host may report them and a
job may name them although they are not the core's built-ins, and registration and submission must
agree on that."""

SHIPPED_PROVIDERS = frozenset({"xce.io/cpu-milli", "xce.io/memory-bytes", "xce.io/gpu"})
