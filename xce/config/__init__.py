"""The cluster configuration file: its schema, loader, conversion for the core, and generated reference.

Import from here; the submodules are split by concern, not by audience.
"""

from xce.config.convert import to_sched_config
from xce.config.loader import ConfigError, ConfigIssue, load_config, parse_config
from xce.config.schema import (
    ClusterConfig,
    HostConfig,
    ProjectConfig,
    QueueConfig,
    SchedulerSettings,
    SharedResourceConfig,
)

__all__ = [
    "ClusterConfig",
    "ConfigError",
    "ConfigIssue",
    "HostConfig",
    "ProjectConfig",
    "QueueConfig",
    "SchedulerSettings",
    "SharedResourceConfig",
    "load_config",
    "parse_config",
    "to_sched_config",
]
