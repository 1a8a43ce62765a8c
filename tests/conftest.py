"""Test configuration: hypothesis profiles and the tests/ folder on ``sys.path``.

Profiles (choose with ``HYPOTHESIS_PROFILE=<name>``; docs/testing.md):

* ``ci`` (default): few examples, ``derandomize=True`` (the same examples on every run, so CI
  never flakes), no deadline, no example database writes that could change later runs.
* ``thorough``: 500 examples per test (tests that set a smaller count get 12.5 times it,
  see ``strategies.scaled``), random seeds, for long local runs:
  ``HYPOTHESIS_PROFILE=thorough pytest tests/``.
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None,
                          database=None, print_blob=True, suppress_health_check=_SUPPRESS)
settings.register_profile("thorough", max_examples=500, deadline=None,
                          print_blob=True, suppress_health_check=_SUPPRESS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_OWN_FILES = {".hypothesis", ".pytest_cache", "__pycache__", ".coverage"}
"""Entries pytest and hypothesis themselves may create in the current directory."""


@pytest.fixture(autouse=True)
def _nothing_written_into_the_current_directory(request):
    """Every test writes its outputs under ``tmp_path`` (or runs with ``cwd`` a temporary
    folder), never into the current directory: a fuzz case with relative output paths once
    left ``report.json`` and ``a/`` in the checkout. Fails the test that did it."""
    cwd = os.getcwd()
    before = set(os.listdir(cwd))
    yield
    new = set(os.listdir(cwd)) - before - _OWN_FILES
    assert not new, f"{request.node.nodeid} wrote {sorted(new)} into {cwd}; use tmp_path"
