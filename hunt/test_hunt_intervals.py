"""Hunt driver: random trees over relations with several interval attributes of several point
types (INT, DATE, TIMESTAMP, FLOAT), unbounded intervals, empty relations, every USING list
(subsets in every order), n-ary set operators, LEFTJOIN USING, SUMMARIZEBY USING, PACK/UNPACK on
any order, interval conditions and formulas; the Python engine against DuckDB (and Spark).

Run: hunt/run.sh N LOG hunt/test_hunt_intervals.py -k duckdb
"""
from __future__ import annotations

import datetime
import itertools
import os

import attrs
import pytest
from hypothesis import given, strategies as st

import sira
from sira import (BOOLEAN, DATE, DATEINTERVAL, FLOATINTERVAL, INT, INTINTERVAL, STRING,
                  TIMESTAMPINTERVAL, Interval, Relation, attr, call, lit)
from sira.algebra.aggregation import SummarizeBy
from sira.algebra.joins import Join, LeftJoin, SemiJoin, SemiMinus
from sira.algebra.setops import Intersect, Minus, Union, XMinus
from sira.intervals import IntervalType

from hunt.common import assert_engines_agree

ENGS = [e for e in os.environ.get("HUNT_ENGINES", "duckdb").split(",")]

D0 = datetime.date(2024, 2, 27)
T0 = datetime.datetime(2024, 1, 1, 23, 59, 59, 999998)

TYPES = {"n": INT, "m": INT, "u": INT, "k": INT, "j": INT, "s": STRING, "x": INTINTERVAL, "y": INTINTERVAL,
         "w": DATEINTERVAL, "t": TIMESTAMPINTERVAL, "f": FLOATINTERVAL}
IVS = ("f", "t", "w", "x", "y")
FALLBACK_IVS = ("x", "x", "y", "w", "t")
# how often each name is drawn: x and y most, then w, t; f rarely
NAME_POOL = ("k", "k", "j", "s", "x", "x", "x", "y", "y", "w", "t", "f")


def _point(t, n):
    if t == INTINTERVAL:
        return n
    if t == DATEINTERVAL:
        return D0 + datetime.timedelta(days=n)
    if t == TIMESTAMPINTERVAL:
        return T0 + datetime.timedelta(microseconds=n)
    return n / 2  # FLOAT


def intervals(t):
    begin = st.integers(0, 7)
    bounded = st.tuples(begin, st.integers(1, 4)).map(
        lambda p: Interval(_point(t, p[0]), _point(t, p[0] + p[1])))
    unb = begin.map(lambda b: Interval(_point(t, b), None))
    return st.one_of(bounded, bounded, bounded, unb)


def values(t):
    if t == INT:
        return st.integers(0, 2)
    if t == STRING:
        return st.sampled_from(["a", "b"])
    return intervals(t)


@st.composite
def headings(draw, min_iv=1):
    names = draw(st.lists(st.sampled_from(NAME_POOL), min_size=1, max_size=3, unique=True))
    if min_iv and not any(n in IVS for n in names):
        names.append(draw(st.sampled_from(FALLBACK_IVS)))
    return sira.Heading.of({n: TYPES[n] for n in sorted(names)})


@st.composite
def relations(draw, heading):
    rows = draw(st.lists(st.tuples(*[values(t) for t in heading.types]),
                         max_size=draw(st.sampled_from([0, 3, 6, 6]))))
    return Relation.from_rows(heading, rows)


def ivnames(h):
    return [n for n in h.names if isinstance(h.type_of(n), IntervalType)]


@st.composite
def usings(draw, h):
    ivs = ivnames(h)
    kind = draw(st.sampled_from(["none", "empty", "sub", "sub"]))
    if kind == "none":
        return None
    if kind == "empty" or not ivs:
        return ()
    sub = draw(st.lists(st.sampled_from(ivs), min_size=1, unique=True))
    return tuple(sub)


@st.composite
def leaf(draw, relvars, heading=None):
    if heading is None:
        heading = draw(headings())
    r = draw(relations(heading))
    if draw(st.booleans()):
        return sira.literal(r)
    name = f"r{len(relvars)}"
    relvars[name] = r
    return sira.relvar(name, r.heading)


@st.composite
def condition(draw, h):
    name = draw(st.sampled_from(h.names))
    t = h.type_of(name)
    if t == INT:
        return call(draw(st.sampled_from(["eq", "ne", "gt"])), attr(name), lit(draw(st.integers(0, 2))))
    if t == STRING:
        return call("eq", attr(name), lit("a"))
    op = draw(st.sampled_from(["overlaps", "before", "meets", "includes", "during", "adjacent",
                               "merges", "starts", "finishes", "iequals"]))
    other = draw(intervals(t))
    args = (attr(name), lit(other, t))
    if draw(st.booleans()):
        args = args[::-1]
    return call(op, *args)


@st.composite
def tree(draw, relvars, depth):
    if depth == 0:
        return draw(leaf(relvars))
    src = draw(tree(relvars, depth - 1))
    h = src.heading
    ivs = ivnames(h)
    op = draw(st.sampled_from(["pack", "unpack", "union", "intersect", "minus", "xminus",
                               "join", "semijoin", "semiminus", "leftjoin", "summarizeby",
                               "restrict", "project", "extend", "rename", "leaf",
                               "group", "transform"]))
    try:
        if op == "leaf":
            return src
        if op == "pack" and ivs:
            order = draw(st.lists(st.sampled_from(ivs), unique=True))
            return src.pack(*order) if order else src.pack(())
        if op == "unpack" and ivs:
            order = draw(st.lists(st.sampled_from(ivs), unique=True, min_size=1))
            return src.unpack(*order)
        if op in ("union", "intersect", "xminus"):
            n = draw(st.integers(1, 2))
            others = [draw(leaf(relvars, h)) for _ in range(n)]
            cls = {"union": Union, "intersect": Intersect, "xminus": XMinus}[op]
            return cls((src, *others), using=draw(usings(h)))
        if op == "minus":
            return Minus(src, draw(leaf(relvars, h)), using=draw(usings(h)))
        if op in ("join", "semijoin", "semiminus", "leftjoin"):
            other = draw(tree(relvars, draw(st.integers(0, depth - 1))))
            both = h.union(other.heading)
            using = draw(usings(both))
            if op == "join":
                return Join((src, other), using=using)
            if op == "leftjoin":
                oh = other.heading
                missing = [n for n in oh.names if n not in h]
                defaults = {}
                for n in missing:
                    t = oh.type_of(n)
                    defaults[n] = lit(draw(values(t)), t) if isinstance(t, IntervalType) \
                        else lit(draw(values(t)))
                return LeftJoin(src, other, defaults=tuple(defaults.items()), using=using)
            return {"semijoin": SemiJoin, "semiminus": SemiMinus}[op](src, other, using=using)
        if op == "summarizeby":
            by = tuple(draw(st.lists(st.sampled_from(h.names), unique=True)))
            byiv = [n for n in by if n in ivs]
            using = draw(st.one_of(st.none(), st.lists(st.sampled_from(byiv), unique=True).map(tuple))) \
                if byiv else None
            free = [m for m in ("n", "m", "u") if m not in h]
            if not free:
                return src
            ints = [n for n in h.names if h.type_of(n) == INT and n not in ("n", "m", "u")]
            if ints and draw(st.booleans()):
                a = attr(draw(st.sampled_from(ints)))
                specs = {free[0]: draw(st.sampled_from([
                    ("plus", a), ("max", a), ("min", a), ("and", call("gt", a, lit(0))),
                    ("or", call("eq", a, lit(1))), ("mult", call("plus", a, lit(1)))]))}
            else:
                specs = {free[0]: ("plus", lit(1))}
            intiv = [n for n in ivs if n not in by and h.type_of(n) == INTINTERVAL]
            if intiv and len(free) > 1:
                specs[free[1]] = (draw(st.sampled_from(["max", "min", "plus"])),
                                  call("duration", attr(intiv[0])))
            ivby = [n for n in ivs if n not in by]
            if ivby and len(free) > 2 and draw(st.booleans()):
                specs[free[2]] = (draw(st.sampled_from(["iunion", "iintersect"])), attr(ivby[0]))
            return SummarizeBy(src, by, tuple((k, *v) for k, v in specs.items()), using=using)
        if op == "group":
            grouped = draw(st.lists(st.sampled_from(h.names), unique=True, min_size=1))
            g = src.group(rv=tuple(grouped))
            return g.ungroup("rv") if draw(st.booleans()) else g.project(*(
                [n for n in g.heading.names if n != "rv"] or ["rv"]))
        if op == "transform":
            keep = draw(st.lists(st.sampled_from(h.names), unique=True, min_size=1))
            return src.transform(*keep)
        if op == "restrict":
            c = draw(condition(h))
            if draw(st.booleans()):
                c = c | draw(condition(h))
            return src.restrict(c)
        if op == "project":
            keep = draw(st.lists(st.sampled_from(h.names), unique=True, min_size=1))
            return src.project(*keep)
        if op == "extend" and ivs:
            n = draw(st.sampled_from(ivs))
            t = h.type_of(n)
            free = [m for m in IVS if m not in h and TYPES[m] == t]
            if free:
                return src.extend(**{free[0]: attr(n)})
            if "d" not in h and t == INTINTERVAL:
                return src.extend(d=call("the_begin", attr(n)))
            return src
        if op == "rename" and ivs:
            n = draw(st.sampled_from(ivs))
            free = [m for m in IVS if m not in h and TYPES[m] == h.type_of(n)]
            if free:
                return src.rename({n: free[0]})
    except sira.SiraError:
        return src
    return src


@st.composite
def trees(draw, depth=3):
    relvars = {}
    node = draw(tree(relvars, draw(st.integers(1, depth))))
    return node, relvars


@pytest.mark.parametrize("engine", ENGS)
@given(trees())
def test_interval_trees_agree(engine, tr):
    node, relvars = tr
    assert_engines_agree(node, relvars, engine=engine)


@pytest.mark.parametrize("engine", ENGS)
@given(trees(depth=1))
def test_shallow_interval_trees_agree(engine, tr):
    node, relvars = tr
    assert_engines_agree(node, relvars, engine=engine)
