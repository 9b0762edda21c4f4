"""SUMMARIZEBYUSING by a sweep line (sira.engine.aggregation.sweep_summary) gives exactly what
the elementary-segment split gives, on random relations with overlapping, meeting, duplicate
and unbounded intervals; and long intervals cost no more than short ones."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
import sira.engine.aggregation as aggregation
from sira import INT, Relation
from sira.intervals import LONGINTERVAL, Interval

from conftest import evaluated_without

QUERIES = [
    "summarizebyusing(r, (k, during), (t(plus(v)) n(plus(1)) hi(max(v)) lo(min(v))"
    " a(and(gt(v, 1))) o(or(eq(v, 3)))), (during))",
    "summarizebyusing(r, (during), (t(plus(v))), (during))",
    "summarizebyusing(project(r, (k, during)), (during), (n(plus(1))), (during))",
]

interval = st.tuples(st.integers(0, 12), st.integers(1, 6), st.booleans()).map(
    lambda t: Interval(t[0], t[0] + t[1] if t[2] else None))
rows = st.lists(st.fixed_dictionaries({"k": st.integers(0, 2), "v": st.integers(0, 4),
                                       "during": interval}), max_size=14)


def _split_reference(text, relvars):
    return evaluated_without(text, relvars, (aggregation, "sweep_summary"))


@pytest.mark.parametrize("text", QUERIES)
@settings(max_examples=150, deadline=None)
@given(rows)
def test_the_sweep_equals_the_segment_split(text, body):
    r = Relation.from_rows({"k": INT, "v": INT, "during": LONGINTERVAL}, body)
    assert sira.evaluate(text, {"r": r}) == _split_reference(text, {"r": r})


def test_long_intervals_are_swept_not_split(monkeypatch):
    called = []
    real = aggregation.sweep_summary
    monkeypatch.setattr(aggregation, "sweep_summary",
                        lambda *a: called.append(1) or real(*a))
    r = Relation.from_rows({"k": INT, "v": INT, "during": LONGINTERVAL},
                           [{"k": 0, "v": i % 7, "during": Interval(i, i + 100_000)}
                            for i in range(3000)])  # split: 3000 x 3000 pieces
    out = sira.evaluate("summarizebyusing(r, (k, during), (t(plus(v))), (during))", {"r": r})
    assert called and len(out) < 6000


def test_a_sum_leaving_its_type_is_still_the_reference_error():
    r = Relation.from_rows({"k": INT, "v": INT, "during": LONGINTERVAL},
                           [{"k": 0, "v": 2**31 - 1, "during": Interval(0, 5)},
                            {"k": 0, "v": 2**31 - 2, "during": Interval(2, 6)}])
    with pytest.raises(sira.SiraError):
        sira.evaluate("summarizebyusing(r, (k, during), (t(plus(v))), (during))", {"r": r})


@settings(max_examples=60, deadline=None)
@given(rows)
def test_duckdb_sweeps_to_the_same_relation(body):
    r = Relation.from_rows({"k": INT, "v": INT, "during": LONGINTERVAL}, body)
    engine = _duckdb()
    for text in ("summarizebyusing(r, (k, during), (t(plus(v)) n(plus(1))), (during))",
                 "summarizebyusing(r, (during), (t(plus(v))), (during))",
                 "summarizebyusing(r, (k, v, during), (n(plus(1))), (during))"):
        assert engine.evaluate(text, {"r": r}) == sira.evaluate(text, {"r": r}), text


_ENGINE = []


def _duckdb():
    if not _ENGINE:
        from sira_duckdb import DuckDBEngine
        _ENGINE.append(DuckDBEngine())
    return _ENGINE[0]


# ------------------------------------------------------------------------------ JOINUSING

JOINS = ["joinusing(r, rename(q, (v, w)), (during))", "joinusing(r, q, (during))",
         "joinusing(project(r, (k, during)), project(rename(q, (k, j)), (j, during)), (during))"]


def _split_join(text, relvars):
    import sira.engine.joins as joins
    return evaluated_without(text, relvars, (joins, "overlap_attribute"))


@pytest.mark.parametrize("text", JOINS)
@settings(max_examples=150, deadline=None)
@given(rows, rows)
def test_joinusing_by_a_sweep_equals_the_segment_split(text, left, right):
    heading = {"k": INT, "v": INT, "during": LONGINTERVAL}
    relvars = {"r": Relation.from_rows(heading, left), "q": Relation.from_rows(heading, right)}
    assert sira.evaluate(text, relvars) == _split_join(text, relvars)
