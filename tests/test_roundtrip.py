"""Every value sira prints parses back to itself (issue 22, point 4): a relation's text
(``literal``), each cell of its table, each CSV cell, over every type -- scalars, intervals
(unbounded above included), AVERAGE, tuple- and relation-valued attributes."""

from __future__ import annotations

import datetime
import io
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import (AVERAGE, BIGINT, BOOLEAN, DATE, DATEINTERVAL, FLOAT, FLOATINTERVAL, INT,
                  INTINTERVAL, LONG, LONGINTERVAL, STRING, TIMESTAMP, TIMESTAMPINTERVAL, Average,
                  Heading, Interval, Relation, RelationType, Tuple, TupleType)
from sira.io.literals import read_scalar

SCALARS = {
    INT: st.integers(INT.min, INT.max),
    LONG: st.integers(LONG.min, LONG.max),
    BIGINT: st.integers(-10 ** 60, 10 ** 60),
    FLOAT: st.floats(allow_nan=False),
    STRING: st.text(max_size=8),
    BOOLEAN: st.booleans(),
    DATE: st.dates(),
    TIMESTAMP: st.datetimes(),
}
INTERVALS = {INTINTERVAL: INT, LONGINTERVAL: LONG, DATEINTERVAL: DATE,
             TIMESTAMPINTERVAL: TIMESTAMP, FLOATINTERVAL: FLOAT}


@st.composite
def intervals(draw, point_type):
    points = SCALARS[point_type].filter(lambda v: not (isinstance(v, float) and math.isinf(v)))
    begin, end = draw(points), draw(points)
    if begin == end or draw(st.booleans()):
        return Interval(min(begin, end), None)  # unbounded above: "until further notice"
    return Interval(min(begin, end), max(begin, end))


FLAT = list(SCALARS) + list(INTERVALS) + [AVERAGE]


def values_of(t):
    if t in SCALARS:
        return SCALARS[t]
    if t in INTERVALS:
        return intervals(INTERVALS[t])
    if t == AVERAGE:
        return st.builds(Average, st.integers(0, 10 ** 6), st.floats(allow_nan=False))
    if isinstance(t, TupleType):
        return st.tuples(*[values_of(u) for u in t.heading.types]).map(
            lambda row: Tuple(t.heading, row))
    if isinstance(t, RelationType):
        return st.lists(st.tuples(*[values_of(u) for u in t.heading.types]), max_size=3).map(
            lambda rows: Relation.from_rows(t.heading, rows))
    raise ValueError(t)


@st.composite
def types(draw, depth=1):
    t = draw(st.sampled_from(FLAT))
    if depth and draw(st.integers(0, 3)) == 0:
        inner = draw(st.lists(types(depth=depth - 1), min_size=1, max_size=2))
        heading = Heading.of([(f"b{i}", u) for i, u in enumerate(inner)])
        return draw(st.sampled_from([TupleType(heading), RelationType(heading)]))
    return t


@st.composite
def typed_values(draw):
    t = draw(types())
    return t, draw(values_of(t))


@settings(max_examples=300, deadline=None)
@given(typed_values())
def test_a_relation_literal_parses_back_to_the_same_relation(tv):
    t, v = tv
    r = Relation.from_rows({"a": t}, [(v,)])
    assert sira.evaluate(sira.parse(r.literal())) == r


@settings(max_examples=300, deadline=None)
@given(typed_values())
def test_a_value_literal_parses_back_to_itself(tv):
    t, v = tv
    assert sira.evaluate(t.literal(v)) == v  # as a scalar expression of the text syntax
    if t != STRING:  # a STRING cell is raw text, never a literal
        assert read_scalar(t, t.literal(v)) == v  # and as a cell of a column of its type


@settings(max_examples=300, deadline=None)
@given(typed_values())
def test_a_table_cell_reads_back_as_a_cell_of_its_type(tv):
    t, v = tv
    if t == STRING:  # a table shows text as it is
        return
    assert read_scalar(t, t.format(v)) == v


@settings(max_examples=200, deadline=None)
@given(st.lists(typed_values(), min_size=1, max_size=3))
def test_a_csv_file_written_by_sira_reads_back(tvs):
    heading = Heading.of([(f"a{i}", t) for i, (t, _) in enumerate(tvs)])
    r = Relation.from_rows(heading, [tuple(v for _, v in tvs)])
    buffer = io.StringIO()
    r.write_csv(buffer)
    buffer.seek(0)
    assert sira.read_csv(buffer) == r


@pytest.mark.parametrize("text", ["dateinterval(begin(2024-01-01)end())",
                                  "dateinterval(begin(2024-01-01))",
                                  "dateinterval(from(2024-01-01)to())"])
def test_an_unbounded_interval_may_be_written_with_an_empty_end(text):
    r = sira.evaluate(f"relation(body(tuple(d({text}))))")
    assert r.to_rows() == [{"d": Interval(datetime.date(2024, 1, 1), None)}]


@pytest.mark.parametrize("cell, expected", [
    ("from(4)to(7)", Interval(4, 8)), ("begin(4)end(8)", Interval(4, 8)),
    ("BEGIN(4)END(8)", Interval(4, 8)), ("BEGIN(4)END()", Interval(4, None)),
    ("begin(4)", Interval(4, None)), ("intinterval(from(4)to(7))", Interval(4, 8)),
])
def test_an_interval_cell_may_leave_out_the_type_name(cell, expected, tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(f'x:intinterval\n"{cell}"\n')
    assert sira.read_csv(path).to_rows() == [{"x": expected}]
