"""snakemake-executor-plugin-lsf's repository tests/tests.py, restated: its sdist ships no tests, and
the whole of the file is snakemake's own executor test base (snakemake.common.tests, from the
installed snakemake: a plain and a grouped workflow) bound to the ``lsf`` executor with its default
settings. Copied to tests/tests.py of a temporary folder by run_suites.py."""

from typing import Optional

import snakemake.common.tests
from snakemake_interface_executor_plugins.settings import ExecutorSettingsBase


class TestWorkflows(snakemake.common.tests.TestWorkflowsLocalStorageBase):
    __test__ = True

    def get_executor(self) -> str:
        return "lsf"

    def get_executor_settings(self) -> Optional[ExecutorSettingsBase]:
        return None
