"""Test-wide settings: property tests are deterministic (a fixed derandomized
search, no example database), so a run can be repeated exactly."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("nard", derandomize=True, database=None, deadline=None)
settings.load_profile("nard")
