"""Every case in specs/ on every engine; `notimpl` cases are strict expected failures there."""

from __future__ import annotations

import pytest

from conftest import ENGINES
from specs import all_cases, run_case

CASES = all_cases()


@pytest.mark.parametrize("engine_name", ENGINES)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_spec_case(case, engine_name):
    reason = case.notimpl(engine_name)
    if reason is None:
        run_case(case, engine_name)
        return
    try:
        run_case(case, engine_name)
    except Exception:
        pytest.xfail(f"notimpl on {engine_name}: {reason}")
    pytest.fail(f"{case.id} passes on {engine_name}: remove its '# notimpl: {engine_name}' line")


def test_there_are_cases_for_every_algebra_family():
    families = {c.path.parent.name for c in CASES}
    assert {"basic", "setops", "joins", "closure", "nesting", "aggregation"} <= families
