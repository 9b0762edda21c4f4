"""Hunt driver: the widened interval trees of test_hunt_intervals, with every relvar handed to
the engine as an Arrow table holding duplicate rows (and shuffled), against the Python engine
on the deduplicated Relations.

Run: hunt/run.sh N LOG hunt/test_hunt_dups.py
"""
from __future__ import annotations

import os

import pyarrow as pa
import pytest
from hypothesis import given, strategies as st

import sira

from hunt import test_hunt_intervals as thi
from hunt.common import _outcome

ENGS = os.environ.get("HUNT_ENGINES", "duckdb,python").split(",")


@st.composite
def dup_cases(draw):
    node, relvars = draw(thi.trees())
    tables = {}
    for name, r in relvars.items():
        t = r.to_arrow()
        if t.num_rows:
            idx = draw(st.lists(st.integers(0, t.num_rows - 1), min_size=t.num_rows,
                                max_size=3 * t.num_rows))
            idx = list(range(t.num_rows)) + idx
            idx = draw(st.permutations(idx))
            t = t.take(pa.array(idx))
        tables[name] = t
    return node, relvars, tables


@pytest.mark.parametrize("engine", ENGS)
@given(dup_cases())
def test_duplicated_arrow_relvars_give_the_result_of_their_sets(engine, case):
    node, relvars, tables = case
    expected, err = _outcome(node, relvars, "python", rewrite=False)
    got, err2 = _outcome(node, tables, engine)
    ctx = f"tree {node!r}\nrelvars {relvars!r}"
    if err is not None:
        assert err2 is not None and type(err2) is type(err), f"{err!r} vs {err2!r} / {got}\n{ctx}"
        return
    assert err2 is None, f"{engine} raised {err2!r}\n{ctx}"
    assert got == expected, (f"{ctx}\nonly python {expected.body - got.body}\n"
                             f"only {engine} {got.body - expected.body}")
