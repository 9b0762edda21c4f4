"""Algebraic laws of the relational operators, checked on small random relations.

Every law evaluates trees built with ``sira.literal`` and the builder methods through
``sira.evaluate`` (the Python engine), and compares relation values. The derived operators are
also checked against their reference lowering in ``sira.algebra.derived``.
"""

from __future__ import annotations

from collections import deque

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sira
from sira import INT, TABLE_DEE, TABLE_DUM, Relation, attr, lit
from sira.algebra.derived import (lower_divideby, lower_leftjoin, lower_semijoin,
                                  lower_semiminus, lower_xminus)

from strategies import (ATTRIBUTE_NAMES, BOOLEAN, INTS, STRING, conditions, default_of,
                        divideby_operands, graphs, relations, rva_relations,
                        same_heading_pairs, same_heading_triples, sharing_pairs,
                        sharing_triples, trees)

LAW = settings(max_examples=200, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

L = sira.literal


def ev(node, relvars=None) -> Relation:
    return sira.evaluate(node, relvars or {})


def empty(heading) -> Relation:
    return Relation(heading, frozenset())


# --------------------------------------------------------------------------- set operators

@LAW
@given(same_heading_pairs())
def test_union_is_commutative(pair):
    r1, r2 = pair
    assert ev(L(r1).union(L(r2))) == ev(L(r2).union(L(r1)))


@LAW
@given(same_heading_triples())
def test_union_is_associative(triple):
    r1, r2, r3 = triple
    left = ev(L(r1).union(L(r2)).union(L(r3)))
    right = ev(L(r1).union(L(r2).union(L(r3))))
    assert left == right == ev(L(r1).union(L(r2), L(r3)))
    assert left.body == r1.body | r2.body | r3.body


@LAW
@given(same_heading_pairs())
def test_intersect_is_commutative(pair):
    r1, r2 = pair
    assert ev(L(r1).intersect(L(r2))) == ev(L(r2).intersect(L(r1)))


@LAW
@given(same_heading_triples())
def test_intersect_is_associative(triple):
    r1, r2, r3 = triple
    left = ev(L(r1).intersect(L(r2)).intersect(L(r3)))
    right = ev(L(r1).intersect(L(r2).intersect(L(r3))))
    assert left == right == ev(L(r1).intersect(L(r2), L(r3)))
    assert left.body == r1.body & r2.body & r3.body


@LAW
@given(relations())
def test_minus_of_itself_is_empty(r):
    assert ev(L(r).minus(L(r))) == empty(r.heading)


@LAW
@given(same_heading_pairs())
def test_xminus_equals_union_minus_intersect(pair):
    r1, r2 = pair
    expected = ev(L(r1).union(L(r2)).minus(L(r1).intersect(L(r2))))
    node = L(r1).xminus(L(r2))
    assert ev(node) == expected
    assert ev(lower_xminus(node)) == expected
    assert ev(L(r2).xminus(L(r1))) == expected


@LAW
@given(same_heading_triples())
def test_nary_xminus_equals_its_lowering(triple):
    r1, r2, r3 = triple
    node = L(r1).xminus(L(r2), L(r3))
    assert ev(node) == ev(lower_xminus(node))
    odd = {t for t in r1.body | r2.body | r3.body
           if (t in r1.body) + (t in r2.body) + (t in r3.body) in (1, 3)}
    assert ev(node).body == odd


# --------------------------------------------------------------------------- joins

@LAW
@given(sharing_pairs())
def test_join_is_commutative(pair):
    r1, r2 = pair
    assert ev(L(r1).join(L(r2))) == ev(L(r2).join(L(r1)))


@LAW
@given(sharing_triples())
def test_join_is_associative(triple):
    r1, r2, r3 = triple
    left = ev(L(r1).join(L(r2)).join(L(r3)))
    right = ev(L(r1).join(L(r2).join(L(r3))))
    assert left == right == ev(L(r1).join(L(r2), L(r3)))


@LAW
@given(sharing_pairs())
def test_join_matches_a_nested_loop_reference(pair):
    r1, r2 = pair
    got = ev(L(r1).join(L(r2)))
    rows = []
    for t1 in r1.to_rows():
        for t2 in r2.to_rows():
            if all(t1[n] == t2[n] for n in t1 if n in t2):
                rows.append({**t1, **t2})
    assert got == Relation.from_rows(r1.heading.union(r2.heading), rows)


@LAW
@given(same_heading_pairs())
def test_join_of_equal_headings_is_intersect(pair):
    r1, r2 = pair
    assert ev(L(r1).join(L(r2))) == ev(L(r1).intersect(L(r2)))


@LAW
@given(relations())
def test_join_with_table_dee_is_identity(r):
    assert ev(L(r).join(L(TABLE_DEE))) == r
    assert ev(L(TABLE_DEE).join(L(r))) == r


@LAW
@given(relations())
def test_join_with_table_dum_is_empty_with_the_same_heading(r):
    assert ev(L(r).join(L(TABLE_DUM))) == empty(r.heading)
    assert ev(L(TABLE_DUM).join(L(r))) == empty(r.heading)


@LAW
@given(sharing_pairs())
def test_semijoin_is_project_of_join_on_the_left_heading(pair):
    r1, r2 = pair
    node = L(r1).semijoin(L(r2))
    expected = ev(L(r1).join(L(r2)).project(*r1.heading.names or ((),)))
    assert ev(node) == expected
    assert ev(lower_semijoin(node)) == expected


@LAW
@given(sharing_pairs())
def test_semiminus_is_minus_of_semijoin(pair):
    r1, r2 = pair
    node = L(r1).semiminus(L(r2))
    expected = ev(L(r1).minus(L(r1).semijoin(L(r2))))
    assert ev(node) == expected
    assert ev(lower_semiminus(node)) == expected
    # together they partition the left operand
    assert ev(L(r1).semijoin(L(r2)).union(node)) == r1


def _defaults(r1, r2) -> dict:
    return {n: lit(default_of(r2.heading.type_of(n)))
            for n in r2.heading.names if n not in r1.heading}


@LAW
@given(sharing_pairs())
def test_leftjoin_is_union_of_join_and_extended_semiminus(pair):
    r1, r2 = pair
    defaults = _defaults(r1, r2)
    node = L(r1).leftjoin(L(r2), **defaults)
    expected = ev(L(r1).join(L(r2)).union(L(r1).semiminus(L(r2)).extend(**defaults)))
    assert ev(node) == expected
    assert ev(lower_leftjoin(node)) == expected
    # every left tuple survives, with its own values
    assert ev(L(ev(node)).project(*r1.heading.names or ((),))) == r1


@LAW
@given(sharing_pairs())
def test_leftjoin_with_computed_defaults_equals_its_lowering(pair):
    r1, r2 = pair
    ints = [n for n in r1.heading.names if r1.heading.type_of(n) == INT]
    defaults = {}
    for n in r2.heading.names:
        if n not in r1.heading:
            t = r2.heading.type_of(n)
            defaults[n] = (attr(ints[0]) + 10) if t == INT and ints else lit(default_of(t))
    node = L(r1).leftjoin(L(r2), **defaults)
    assert ev(node) == ev(lower_leftjoin(node))


def _divide_reference(subject, intersection, target) -> Relation:
    """DIVIDEBY by its definition: the s in SUBJECT such that for every t in TARGET, s joined
    with t and projected on INTERSECTION's heading is in INTERSECTION."""
    inter = set(map(tuple, (sorted(r.items()) for r in intersection.to_rows())))
    names = intersection.heading.names
    keep = []
    for s in subject.to_rows():
        ok = True
        for t in target.to_rows():
            both = {**s, **t}
            if tuple(sorted((n, both[n]) for n in names)) not in inter:
                ok = False
                break
        if ok:
            keep.append(s)
    return Relation.from_rows(subject.heading, keep)


@LAW
@given(divideby_operands())
def test_divideby_matches_its_definition(operands):
    subject, intersection, target = operands
    node = L(subject).divideby(L(intersection), L(target))
    expected = _divide_reference(subject, intersection, target)
    assert ev(node) == expected
    assert ev(lower_divideby(node)) == expected


@LAW
@given(relations(), relations())
def test_divideby_by_an_empty_target_is_the_subject(subject, other):
    target = Relation(other.heading.without([n for n in other.heading.names
                                             if n in subject.heading]), frozenset())
    both = subject.heading.union(target.heading)
    intersection = Relation(both, frozenset())
    assert ev(L(subject).divideby(L(intersection), L(target))) == subject


# --------------------------------------------------------------------------- nesting

@LAW
@given(st.data())
def test_group_then_ungroup_gives_back_the_input(data):
    r = data.draw(relations())
    names = r.heading.names
    grouped = data.draw(st.lists(st.sampled_from(names), unique=True, min_size=1)
                        if names else st.just([]))
    if not grouped:
        return
    rva = "grp"
    grouping = L(r).group(**{rva: tuple(grouped)})
    g = ev(grouping)
    # no RVA GROUP produces is empty, and each key value appears once
    assert all(len(t[rva]) > 0 for t in g)
    key = [n for n in names if n not in grouped]
    assert len(ev(L(g).project(*key or ((),)))) == len(g)
    assert ev(grouping.ungroup(rva)) == r


@LAW
@given(rva_relations())
def test_ungroup_then_group_gives_back_an_rva_relation_without_empty_rvas(r):
    inner = r.heading.type_of("r").heading.names
    assert ev(L(r).ungroup("r").group(r=inner)) == r


@LAW
@given(rva_relations(allow_empty_rva=True))
def test_ungroup_drops_tuples_whose_rva_is_empty(r):
    u = ev(L(r).ungroup("r"))
    key = [n for n in r.heading.names if n != "r"]
    nonempty = [t for t in r if len(t["r"])]
    assert len(u) == sum(len(t["r"]) for t in nonempty)
    assert ev(L(u).project(*key or ((),))) == ev(
        L(r).restrict(~sira.call("is_empty", attr("r"))).project(*key or ((),)))


# --------------------------------------------------------------------------- aggregation

AGG_CHOICES = ("count", "sum", "max", "min", "and", "or", "maxstr")


def _agg_specs(data, heading, allowed):
    """Random aggregation specs over the attributes ``allowed`` (never the BY attributes)."""
    ints = [n for n in allowed if heading.type_of(n) == INT]
    bools = [n for n in allowed if heading.type_of(n) == BOOLEAN]
    strs = [n for n in allowed if heading.type_of(n) == STRING]
    specs = {"cnt": ("plus", lit(1))}
    for i, kind in enumerate(data.draw(st.lists(st.sampled_from(AGG_CHOICES), max_size=3))):
        name = f"x{i}"
        if kind == "sum" and ints:
            specs[name] = ("plus", attr(data.draw(st.sampled_from(ints))))
        elif kind in ("max", "min") and ints:
            specs[name] = (kind, attr(data.draw(st.sampled_from(ints))) * 2)
        elif kind in ("and", "or") and bools:
            specs[name] = (kind, attr(data.draw(st.sampled_from(bools))))
        elif kind == "maxstr" and strs:
            specs[name] = ("max", attr(data.draw(st.sampled_from(strs))))
        elif kind == "count":
            specs[name] = ("plus", lit(data.draw(INTS)))
    return specs


@LAW
@given(st.data())
def test_summarizeby_equals_group_aggregate_ungroup(data):
    r = data.draw(relations())
    names = r.heading.names
    by = tuple(data.draw(st.lists(st.sampled_from(names), unique=True)) if names else [])
    rest = tuple(n for n in names if n not in by)
    specs = _agg_specs(data, r.heading, rest)
    got = ev(L(r).summarizeby(by, **specs))

    # the reference: GROUP the non-BY attributes, AGGREGATE each group's relation, assemble
    rows = []
    if rest:
        grouped = ev(L(r).group(grp=rest))
        for t in grouped:
            aggregated = ev(L(t["grp"]).aggregate(**specs)).to_rows()
            assert len(aggregated) == 1
            rows.append({**{n: t[n] for n in by}, **aggregated[0]})
    else:  # every attribute is BY: each group is one tuple, its relation TABLE_DEE
        for t in r.to_rows():
            rows.append({**t, **ev(L(TABLE_DEE).aggregate(**specs)).to_rows()[0]})
    assert got == Relation.from_rows(got.heading, rows)
    assert got.heading.names == tuple(sorted(by + tuple(specs)))


@LAW
@given(relations())
def test_aggregate_count_is_cardinality(r):
    got = ev(L(r).aggregate(cnt=("plus", lit(1))))
    assert got.to_rows() == [{"cnt": len(r)}]


# --------------------------------------------------------------------------- closure

def _reachable(edges):
    succ = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    out = set()
    for start in succ:
        seen = set()
        queue = deque(succ[start])
        while queue:
            n = queue.popleft()
            if n in seen:
                continue
            seen.add(n)
            queue.extend(succ.get(n, ()))
        out |= {(start, n) for n in seen}
    return out


def _pairs(r):
    return {(t["src"], t["dst"]) for t in r}


@LAW
@given(graphs())
def test_tclose_is_transitive(g):
    closure = _pairs(ev(L(g).tclose("src", "dst")))
    for a, b in closure:
        for b2, c in closure:
            if b == b2:
                assert (a, c) in closure


@LAW
@given(graphs())
def test_tclose_contains_its_input(g):
    assert _pairs(g) <= _pairs(ev(L(g).tclose("src", "dst")))


@LAW
@given(graphs())
def test_tclose_is_minimal(g):
    closure = _pairs(ev(L(g).tclose("src", "dst")))
    assert closure <= _reachable(_pairs(g))
    assert closure == _reachable(_pairs(g))


@LAW
@given(graphs())
def test_tclose_is_idempotent_and_follows_the_pair_direction(g):
    once = ev(L(g).tclose("src", "dst"))
    assert ev(L(once).tclose("src", "dst")) == once
    # the reversed graph's closure is the reversed closure
    reversed_ = ev(L(g).rename(src="dst", dst="src").tclose("src", "dst"))
    assert _pairs(reversed_) == {(b, a) for a, b in _pairs(once)}


# --------------------------------------------------------------------------- basic operators

@LAW
@given(st.data())
def test_project_is_idempotent(data):
    r = data.draw(relations())
    names = r.heading.names
    outer = data.draw(st.lists(st.sampled_from(names), unique=True) if names else st.just([]))
    inner = data.draw(st.lists(st.sampled_from(outer), unique=True) if outer else st.just([]))
    once = L(r).project(*outer or ((),))
    assert ev(once.project(*outer or ((),))) == ev(once)
    assert ev(once.project(*inner or ((),))) == ev(L(r).project(*inner or ((),)))


@LAW
@given(relations())
def test_project_on_all_attributes_is_identity(r):
    assert ev(L(r).project(*r.heading.names or ((),))) == r


@LAW
@given(relations())
def test_project_on_no_attributes_is_dee_or_dum(r):
    assert ev(L(r).project(())) == (TABLE_DEE if len(r) else TABLE_DUM)


@LAW
@given(st.data())
def test_restrict_with_and_equals_nested_restricts(data):
    r = data.draw(relations())
    c1 = data.draw(conditions(r.heading))
    c2 = data.draw(conditions(r.heading))
    both = ev(L(r).restrict(c1 & c2))
    assert both == ev(L(r).restrict(c1).restrict(c2))
    assert both == ev(L(r).restrict(c2).restrict(c1))
    # and OR is the union of the restrictions
    assert ev(L(r).restrict(c1 | c2)) == ev(L(r).restrict(c1).union(L(r).restrict(c2)))
    # and NOT the complement
    assert ev(L(r).restrict(~c1)) == ev(L(r).minus(L(r).restrict(c1)))


@LAW
@given(st.data())
def test_rename_twice_back_is_identity(data):
    r = data.draw(relations())
    names = list(r.heading.names)
    pool = names + ["n1", "n2", "n3"]
    targets = data.draw(st.permutations(pool))[:len(names)]
    forward = dict(zip(names, targets))
    back = {new: old for old, new in forward.items()}
    renamed = L(r).rename(forward)
    assert sorted(renamed.heading.names) == sorted(targets)
    assert ev(L(ev(renamed)).rename(back)) == r
    assert ev(renamed.rename(back)) == r


@LAW
@given(relations())
def test_extend_then_project_away_is_identity(r):
    node = L(r).extend(zz=lit(1), yy=lit("q"))
    assert ev(node.project(*r.heading.names or ((),))) == r
    assert len(ev(node)) == len(r)


# --------------------------------------------------------------------------- text round trip

@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(trees())
def test_text_round_trip_of_random_trees(tree):
    node, relvars = tree
    text = repr(node)
    assert sira.parse(text, relvars) == node
    # and the parsed tree evaluates like the original
    assert ev(sira.parse(text, relvars), relvars) == ev(node, relvars)


@LAW
@given(relations())
def test_relation_literal_text_round_trip(r):
    assert sira.evaluate(repr(r)) == r
    assert sira.parse(repr(L(r))) == L(r)


# --------------------------------------------------------------------------- text round trip: edges

import datetime  # noqa: E402
import math  # noqa: E402

import pytest  # noqa: E402

from sira import (AVERAGE, BIGINT, DATE, FLOAT, INTINTERVAL, LONG, TIMESTAMP,  # noqa: E402
                  Average, Interval)
from sira.syntax import cst  # noqa: E402
from sira.syntax.builder import build_cst  # noqa: E402
from sira.syntax.parser import parse_script  # noqa: E402

from specs import all_cases  # noqa: E402

ROUND_TRIP_VALUES = [
    (STRING, "a,b"), (STRING, " a "), (STRING, ""), (STRING, "#x"), (STRING, "a\nb"),
    (STRING, "\n# c"), (STRING, "(a)"), (STRING, "é"), (FLOAT, 0.1), (FLOAT, -1.5),
    (FLOAT, 1e-7), (FLOAT, 1.4167099448608936e22), (FLOAT, 5e-324), (INT, -2147483648),
    (LONG, -9223372036854775808), (LONG, 2147483648), (BIGINT, 10**30),
    (DATE, datetime.date(1, 1, 1)), (TIMESTAMP, datetime.datetime(2020, 1, 1, 10, 0, 0, 5)),
    (INTINTERVAL, Interval(1, None)), (INTINTERVAL, Interval(4, 8)),
    (AVERAGE, Average(5, 29491.199999999997)),
]


@pytest.mark.parametrize("t, value", ROUND_TRIP_VALUES, ids=[repr(v) for _, v in ROUND_TRIP_VALUES])
def test_text_round_trip_of_edge_values_in_relation_literals(t, value):
    r = Relation.from_rows({"x": t}, [(value,)])
    assert sira.evaluate(repr(r)) == r
    assert sira.parse(repr(L(r))) == L(r)


@pytest.mark.parametrize("value", ["a)", "(a", "))((", "it's", "'", "string(", "a\n#)"])
def test_text_round_trip_of_strings_with_unbalanced_parentheses(value):
    r = Relation.from_rows({"s": STRING}, [(value,)])
    assert sira.evaluate(repr(r)) == r
    node = L(TABLE_DEE).extend(x=lit(value))
    assert sira.parse(repr(node)) == node


@LAW
@given(st.text(max_size=12))
def test_text_round_trip_of_arbitrary_strings(value):
    r = Relation.from_rows({"s": STRING}, [(value,)])
    assert sira.evaluate(repr(r)) == r
    node = L(r).restrict(attr("s").eq(value)).extend(x=lit(value))
    assert sira.parse(repr(node)) == node
    assert sira.evaluate(node).to_rows() == [{"s": value, "x": value}]


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_text_round_trip_of_infinite_floats(value):
    assert sira.evaluate("extend(TABLE_DEE, (x(1e400)))").to_rows() == [{"x": math.inf}]
    r = Relation.from_rows({"f": FLOAT}, [(value,)])
    assert sira.evaluate(repr(r)) == r


@pytest.mark.parametrize("t", [LONG, BIGINT])
def test_text_round_trip_of_small_long_literals_in_expressions(t):
    node = L(TABLE_DEE).extend(x=lit(5, t))
    assert sira.parse(repr(node)) == node
    assert sira.parse(repr(node)).heading == node.heading


PRINTER_BUGS: dict = {}  # spec queries whose text round trip is a known sira bug


@pytest.mark.parametrize("text", [
    "extend(TABLE_DEE, (x(average(count(1)value(tofloat(plus(1,1)))))))",
    "extend(TABLE_DEE, (x(intinterval(from(1)to(plus(1,2))))))",
    "extend(TABLE_DEE, (x(intinterval(begin(1)end(plus(1,2))))))",
])
def test_text_round_trip_of_computed_selectors(text):
    node = sira.parse(text)
    assert sira.parse(repr(node)) == node


def _spec_queries():
    out = []
    for case in all_cases():
        try:
            statements = parse_script(case.text)
        except sira.ParseError:
            continue  # the deliberately malformed case
        if any(isinstance(s, cst.ExpectError) for s in statements):
            continue
        marks = ()
        if case.id in PRINTER_BUGS:
            marks = pytest.mark.xfail(strict=True, reason=PRINTER_BUGS[case.id])
        out.append(pytest.param(case, id=case.id, marks=marks))
    return out


@pytest.mark.parametrize("case", _spec_queries())
def test_text_round_trip_of_every_spec_query(case):
    relvars: dict = {}
    query = None
    for s in parse_script(case.text):
        if isinstance(s, cst.Bind):
            relvars[s.name.lower()] = sira.evaluate(build_cst(s.value, relvars, relvars), relvars)
        elif isinstance(s, cst.Query):
            query = build_cst(s.value, relvars, relvars)
    if not isinstance(query, sira.Node):
        return
    assert sira.parse(repr(query), relvars) == query
