"""Hunt driver: LEFTJOIN (USING variants, defaults reading intervals) equals its definition
union(join, extend(semiminus, defaults)) with the same USING list, on every engine."""
import os

import pytest
from hypothesis import given, strategies as st

import sira
from sira import INT, INTINTERVAL, attr, call, lit
from sira.algebra.basic import Extend
from sira.algebra.joins import Join, LeftJoin, SemiMinus
from sira.algebra.setops import Union

from hunt import test_hunt_intervals as thi
from hunt.common import _outcome

ENGS = os.environ.get("HUNT_ENGINES", "python,duckdb").split(",")


@st.composite
def cases(draw):
    relvars = {}
    left = draw(thi.tree(relvars, draw(st.integers(0, 1))))
    right = draw(thi.tree(relvars, draw(st.integers(0, 1))))
    lh, rh = left.heading, right.heading
    if any(lh.type_of(n) != rh.type_of(n) for n in lh.names if n in rh):
        return None
    missing = [n for n in rh.names if n not in lh]
    ivs = [n for n in lh.names if lh.type_of(n) == INTINTERVAL]
    defaults = []
    for n in missing:
        t = rh.type_of(n)
        if t == INT and ivs and draw(st.booleans()):
            iv = attr(draw(st.sampled_from(ivs)))
            defaults.append((n, draw(st.sampled_from([call("the_begin", iv),
                                                       call("plus", call("the_begin", iv), lit(1))]))))
        elif t == INTINTERVAL and ivs and draw(st.booleans()):
            defaults.append((n, attr(draw(st.sampled_from(ivs)))))
        else:
            from sira.intervals import IntervalType
            if not isinstance(t, IntervalType) and t not in (INT, sira.STRING):
                return None  # an RVA from GROUP: no default drawn here
            v = draw(thi.values(t))
            defaults.append((n, lit(v, t) if isinstance(t, IntervalType) else lit(v)))
    using = draw(thi.usings(lh.union(rh)))
    try:
        node = LeftJoin(left, right, defaults=tuple(defaults), using=using)
        node.heading
        d = Union((Join((left, right), using=using),
                   Extend(SemiMinus(left, right, using=using), tuple(defaults))), using=using)
        d.heading
    except (sira.SiraError, KeyError):
        return None
    return node, d, relvars


@pytest.mark.parametrize("engine", ENGS)
@given(cases())
def test_leftjoin_equals_its_definition(engine, case):
    if case is None:
        return
    node, d, relvars = case
    want, err = _outcome(d, relvars, "python", rewrite=False)
    got, err2 = _outcome(node, relvars, engine)
    if err is not None or err2 is not None:
        return  # errors are compared elsewhere (where a default fails, for instance)
    assert got == want, f"{node!r}\n{relvars!r}\nonly got {got.body - want.body}\nonly def {want.body - got.body}"
