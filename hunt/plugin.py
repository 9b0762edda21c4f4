"""pytest plugin for the hunt: run every @given test with many more examples.

    -p hunt.plugin --hunt-n 3000     every Hypothesis test runs 3000 examples (deadline off,
                                     health checks suppressed, no example database)
    -p hunt.plugin --hunt-scale 10 --hunt-cap 2000   each test runs 10x its own count, at most 2000
"""
from hypothesis import HealthCheck, Phase, settings


def pytest_addoption(parser):
    parser.addoption("--hunt-n", type=int, default=None)
    parser.addoption("--hunt-scale", type=float, default=None)
    parser.addoption("--hunt-cap", type=int, default=3000)


def pytest_collection_modifyitems(session, config, items):
    n = config.getoption("--hunt-n")
    scale = config.getoption("--hunt-scale")
    cap = config.getoption("--hunt-cap")
    if not n and not scale:
        return
    for item in items:
        fn = getattr(item, "obj", None)
        if fn is None or not hasattr(fn, "hypothesis"):
            continue
        old = getattr(fn, "_hypothesis_internal_use_settings", None) or settings.default
        count = n if n else min(cap, max(int(old.max_examples * scale), 1))
        fn._hypothesis_internal_use_settings = settings(
            old, max_examples=count, deadline=None, database=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.generate, Phase.shrink])
