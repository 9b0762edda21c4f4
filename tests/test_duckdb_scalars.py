"""Scalar operators on DuckDB give the Python engine's values and errors: every operator of the
library on every argument type it takes, on random values (edges included: the INT limits,
infinities, empty and unbounded intervals, Unicode text), plus the cases whose DuckDB spelling
differs most from Python's (blanks, case mapping, number syntax, float formatting)."""

from __future__ import annotations

import datetime
import itertools
import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import sira
from sira import (AVERAGE, BIGINT, BOOLEAN, DATE, DATEINTERVAL, FLOAT, FLOATINTERVAL, INT,
                  INTINTERVAL, LONG, LONGINTERVAL, STRING, TIMESTAMP, TIMESTAMPINTERVAL,
                  Average, Interval, Relation, RelationType, attr, call)
from sira.errors import DivisionByZero, FloatOverflow, IntOverflow, SiraValueError
from sira.expressions.library import LIBRARY, resolve

from conftest import ENGINES

pytestmark = pytest.mark.skipif("duckdb" not in ENGINES, reason="needs duckdb and pyarrow")

SMALL_RELATION = RelationType(sira.Heading.of({"k": INT}))
TYPES = [INT, LONG, BIGINT, FLOAT, STRING, BOOLEAN, DATE, TIMESTAMP, AVERAGE, INTINTERVAL,
         LONGINTERVAL, DATEINTERVAL, TIMESTAMPINTERVAL, FLOATINTERVAL, SMALL_RELATION]


def _signatures() -> list:
    """(operator, argument types) for every operator and every combination of TYPES (up to
    three arguments) it takes."""
    out = []
    for name, op in sorted(LIBRARY.items()):
        most = 3 if op.max_args is None else min(op.max_args, 3)
        for n in range(op.min_args, most + 1):
            for types in itertools.product(TYPES, repeat=n):
                try:
                    resolve(name, types)
                except sira.SiraError:
                    continue
                out.append((name, types))
    return out


SIGNATURES = _signatures()


def ints(lo, hi):
    return st.one_of(st.sampled_from([lo, hi, 0, 1, -1, 2, 7]), st.integers(-100, 100),
                     st.integers(lo, hi))


FLOATS = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -2.5, 0.1, 1e308, -1e308, 5e-324, math.inf,
                                    -math.inf, 1e16, 123456789.125]),
                   st.floats(allow_nan=False, width=64),
                   st.floats(-1e3, 1e3, allow_nan=False))
TEXT = st.one_of(st.sampled_from(["", " 12 ", "1_000", "-7", "+3", "\u0663", " true ", "FALSE",
                                  "nan", "inf", " 1e5 ", ".5", "\u2003x\u3000", "ßΣaΣ", "İ",
                                  "it's", "(a", "b)", "1e400", "2147483648"]),
                 st.text(alphabet=" \t\n\x0b\x85\xa0\u2003abcÉéßΣ'()0123456789._+-eE",
                         max_size=8))
DATES = st.dates(datetime.date(2, 1, 1), datetime.date(9998, 12, 31))
TIMESTAMPS = st.datetimes(datetime.datetime(2, 1, 1), datetime.datetime(9998, 12, 31))


def _intervals(points, after):
    """Intervals over ``points``: bounded, unbounded, and now and then empty."""
    bounded = st.tuples(points, st.integers(1, 5)).map(lambda p: Interval(p[0], after(*p)))
    return st.one_of(bounded, bounded, points.map(lambda b: Interval(b, None)),
                     points.map(lambda b: Interval(b, b)))


VALUES = {
    INT: ints(INT.min, INT.max),
    LONG: ints(LONG.min, LONG.max),
    BIGINT: ints(-10 ** 18, 10 ** 18),
    FLOAT: FLOATS,
    STRING: TEXT,
    BOOLEAN: st.booleans(),
    DATE: DATES,
    TIMESTAMP: TIMESTAMPS,
    AVERAGE: st.builds(Average, st.integers(0, 4), st.floats(-1e6, 1e6, allow_nan=False)),
    INTINTERVAL: _intervals(st.integers(-20, 20), lambda b, n: b + n),
    LONGINTERVAL: _intervals(st.integers(-20, 20), lambda b, n: b + n),
    DATEINTERVAL: _intervals(st.dates(datetime.date(2000, 1, 1), datetime.date(2000, 3, 1)),
                             lambda b, n: b + datetime.timedelta(days=n)),
    TIMESTAMPINTERVAL: _intervals(
        st.datetimes(datetime.datetime(2000, 1, 1), datetime.datetime(2000, 1, 2)),
        lambda b, n: b + datetime.timedelta(microseconds=n)),
    FLOATINTERVAL: _intervals(st.floats(-10, 10, allow_nan=False), lambda b, n: b + n),
    SMALL_RELATION: st.lists(st.integers(0, 3), max_size=3).map(
        lambda ks: Relation.from_rows({"k": INT}, [(k,) for k in ks])),
}


def _outcome(tree, engine):
    try:
        return sira.evaluate(tree, {}, engine=engine), None
    except sira.SiraError as err:
        return None, err


def agree(tree):
    expected, py_err = _outcome(tree, "python")
    got, duck_err = _outcome(tree, "duckdb")
    if py_err is not None:
        assert duck_err is not None, f"python raised {py_err!r}, duckdb gave {got}\n{tree!r}"
        assert type(duck_err) is type(py_err), \
            f"python raised {py_err!r}, duckdb raised {duck_err!r}\n{tree!r}"
        return None
    assert duck_err is None, f"duckdb raised {duck_err!r}, python gave {expected}\n{tree!r}"
    assert got == expected, f"{tree!r}\npython: {expected!r}\nduckdb: {got!r}"
    return got


@st.composite
def operator_calls(draw):
    """A one-tuple relation of random arguments and the EXTEND calling one operator on them
    (the values are attributes, so DuckDB computes on columns, not on folded constants)."""
    name, types = draw(st.sampled_from(SIGNATURES))
    values = [draw(VALUES[t]) for t in types]
    names = [f"a{i}" for i in range(len(types))]
    source = Relation.from_rows(dict(zip(names, types)), [dict(zip(names, values))]) \
        if types else sira.TABLE_DEE
    return sira.literal(source).extend(x=call(name, *[attr(n) for n in names]))


def test_every_library_operator_has_a_duckdb_translation():
    from sira_duckdb import unsupported_operators
    assert unsupported_operators() == []


def test_every_library_operator_is_exercised_below():
    assert {name for name, _ in SIGNATURES} == set(LIBRARY) - {"and", "or"} | {"and", "or"}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large,
                                                                   HealthCheck.filter_too_much])
@given(operator_calls())
def test_every_operator_gives_the_python_value_or_error(tree):
    agree(tree)


@pytest.mark.parametrize("t, begin", [(INTINTERVAL, 16384), (LONGINTERVAL, -3),
                                      (FLOATINTERVAL, 1.0),
                                      (DATEINTERVAL, datetime.date(2020, 2, 29)),
                                      (TIMESTAMPINTERVAL, datetime.datetime(2021, 1, 1, 12))])
def test_the_string_of_an_empty_interval_is_one_text_on_both_engines(t, begin):
    """Every empty interval is one value, so its text cannot depend on the begin the Python
    engine shows it at (hypothesis found BEGIN(1.0)END(1.0) against DuckDB's BEGIN(0.0)END(0.0));
    the same inside a relation-valued attribute."""
    empty = sira.literal(Relation.from_rows({"e": t}, [(Interval(begin, begin),)]))
    (row,) = agree(empty.extend(x=call("the_string", attr("e")))).to_rows()
    if t in (INTINTERVAL, LONGINTERVAL):
        assert row["x"] == "BEGIN(0)END(0)"
    agree(empty.group(r=("e",)).extend(x=call("the_string", attr("r"))))


def test_the_blanks_duckdb_trims_are_pythons():
    from sira_duckdb.functions import PY_SPACES
    assert list(PY_SPACES) == [i for i in range(0x110000) if chr(i).isspace()]


def quoted(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


@pytest.mark.parametrize("text", ["ß", "ΑΣ ΣΑ", "İstanbul", "ŉ", "ﬁ", "Straße", "ǅ", "ᾼ", "abc"])
def test_case_mapping_is_pythons_for_any_text(text):
    r = agree(sira.parse(f"relation(body(tuple(l(lowercase({quoted(text)})) "
                         f"u(uppercase({quoted(text)})))))"))
    assert r.to_rows() == [{"l": text.lower(), "u": text.upper()}]


@pytest.mark.parametrize("text", ["1_000", "\u0663\u0663", " -5 ", "+0", "12x", "", "1e3"])
def test_int_and_float_read_python_number_syntax(text):
    for op in ("int", "long", "bigint", "float"):
        agree(sira.literal(Relation.from_rows({"s": STRING}, [(text,)]))
              .extend(x=call(op, attr("s"))))


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False))
@example(1e16)
@example(1e15)
@example(-0.0)
@example(5e-324)
@example(math.inf)
def test_the_string_of_a_float_is_its_python_repr(x):
    r = agree(sira.literal(Relation.from_rows({"f": FLOAT}, [(x,)]))
              .extend(s=call("the_string", attr("f"))))
    assert r.to_rows()[0]["s"] == FLOAT.format(x + 0.0)


def test_float_sums_are_exact_sums_rounded_once_and_products_the_python_engines_bits():
    values = [1e16, -1e16] + [0.5 + i for i in range(1000)] + [0.1 * i for i in range(1000)]
    factors = [1 + (-1) ** i * 1e-3 * (i % 13) for i in range(2002)]
    r = Relation.from_rows({"i": INT, "v": FLOAT, "f": FLOAT},
                           [(i, v, f) for i, (v, f) in enumerate(zip(values, factors))])
    tree = sira.literal(r).aggregate(s=("plus", attr("v")), p=("mult", attr("f")),
                                     m=("max", attr("v")))
    got = agree(tree)
    (row,) = got.to_rows()
    total, product = 0.0, 1.0
    for v in sorted(values):
        total += v
    for f in sorted(factors):
        product *= f
    from fractions import Fraction
    assert (row["s"], row["p"]) == (float(sum(map(Fraction, values))), product)
    assert total != row["s"]  # added in ascending order, 1e16 swallows 50.0 of the halves


@pytest.mark.parametrize("spec, cls", [
    ("x(plus(f, f))", FloatOverflow), ("x(div(i, z))", DivisionByZero),
    ("x(mod(i, z))", DivisionByZero), ("x(div(f, tofloat(z)))", DivisionByZero),
    ("x(plus(i, 2147483647))", IntOverflow), ("x(neg(m))", IntOverflow),
    ("x(abs(m))", IntOverflow), ("x(minus(tofloat(w), tofloat(w)))", SiraValueError)])
def test_arithmetic_faults_are_the_python_classes(spec, cls):
    r = Relation.from_rows({"f": FLOAT, "i": INT, "z": INT, "m": INT, "w": FLOAT},
                           [(1e308, 5, 0, INT.min, 0.0)])
    text = f"extend(r, ({spec}))".replace("tofloat(w)", "w")
    if "minus" in spec:
        r = Relation.from_rows({"w": FLOAT}, [(math.inf,)])
        text = "extend(r, (x(minus(w, w))))"
    tree = sira.parse(text, {"r": r})
    with pytest.raises(cls):
        sira.evaluate(tree, {"r": r}, engine="duckdb")
    with pytest.raises(cls):
        sira.evaluate(tree, {"r": r})


def test_max_over_an_empty_relation_is_the_identity():
    empty = Relation.from_rows({"a": INT, "s": STRING, "d": DATE}, [])
    tree = sira.literal(empty).aggregate(hi=("max", attr("a")), lo=("min", attr("a")),
                                         s=("max", attr("s")), d=("max", attr("d")),
                                         n=("plus", attr("a")))
    r = agree(tree)
    assert r.to_rows() == [{"hi": INT.min, "lo": INT.max, "s": "", "d": datetime.date.min,
                            "n": 0}]


@settings(max_examples=60, deadline=None)
@given(st.lists(FLOATS, max_size=5), st.sampled_from(["count", "sum", "avg", "max", "min"]))
def test_aggregates_of_a_relation_valued_attribute_are_pythons(values, op):
    from sira.expressions.nodes import Aggregated, AttrRef
    r = Relation.from_rows({"k": INT, "v": FLOAT}, list(enumerate(values)))
    grouped = sira.literal(Relation.from_rows({"w": RelationType(r.heading)}, [(r,)]))
    agree(grouped.extend(x=Aggregated(op, AttrRef("w"), None if op == "count" else "v")))
