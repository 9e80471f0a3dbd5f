"""Fixtures every test directory may use."""

from __future__ import annotations

import pytest

from pgschema import fresh_schema


@pytest.fixture
def pg_url():
    """A URL whose search_path is a fresh schema, dropped afterwards: reruns start clean."""
    with fresh_schema() as url:
        yield url
