"""Fixtures every test directory may use."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis.configuration import set_hypothesis_home_dir
from pgschema import fresh_schema

# Hypothesis keeps its example database and caches outside the checkout: a test run writes nothing there.
set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "xce-hypothesis"))


@pytest.fixture
def pg_url():
    """A URL whose search_path is a fresh schema, dropped afterwards: reruns start clean."""
    with fresh_schema() as url:
        yield url
