"""Hunt driver: JOIN of three operands (and n-ary set operators) with every USING list, against
the point definition (Python) and DuckDB."""
import os

import pytest
from hypothesis import given, strategies as st

import sira
from sira.algebra.joins import Join
from sira.algebra.setops import Intersect, Union, XMinus

from hunt import test_hunt_intervals as thi
from hunt import test_hunt_oracle as oracle
from hunt.common import assert_engines_agree

ENGS = os.environ.get("HUNT_ENGINES", "duckdb").split(",")


@st.composite
def three_way(draw):
    relvars = {}
    ops = [draw(thi.leaf(relvars)) for _ in range(3)]
    h = ops[0].heading
    for o in ops[1:]:
        h = h.union(o.heading) if all(h.type_of(n) == o.heading.type_of(n)
                                      for n in o.heading.names if n in h) else h
    using = draw(thi.usings(h))
    try:
        node = Join(tuple(ops), using=using)
        node.heading
    except sira.SiraError:
        node = ops[0]
    return node, relvars


@pytest.mark.parametrize("engine", ENGS)
@given(three_way())
def test_three_way_joins_agree(engine, tr):
    assert_engines_agree(tr[0], tr[1], engine=engine)


@given(three_way())
def test_three_way_joins_follow_the_point_definition(tr):
    oracle.check_tree(*tr)
