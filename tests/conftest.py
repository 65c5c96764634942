"""Shared test settings: hypothesis profiles sized for CI's two cores.

HYPOTHESIS_PROFILE picks one: "dev" (quick, default locally), "ci" (default when CI is
set: several hundred examples per property) or "stress" (thousands, for bug hunting).
"""

import os

from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("stress", max_examples=3000, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
