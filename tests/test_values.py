"""Heading, Tuple, Relation, TABLE_DEE/TABLE_DUM and scalar values: equality by value,
hashability, canonical names, construction, deterministic order, printing, type ranges."""

from __future__ import annotations

import copy
import math
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import (AVERAGE, BOOLEAN, FLOAT, INT, INTINTERVAL, LONG, STRING, TABLE_DEE, TABLE_DUM,
                  Average, DuplicateAttribute, FloatOverflow, Heading, IntOverflow, Interval,
                  Relation, RelationType, SiraError, SiraTypeError, SiraValueError, Tuple,
                  UnknownAttribute, attr, lit)

from strategies import relations

L = sira.literal

DBMSFILE = Relation.from_rows(
    {"filename": STRING, "pagesize": INT},
    [("DATABASECATALOG.SPDB", 32768), ("BW_SPECIES.SPDB", 32768),
     ("BW_SPOTSXSPNAME.SPDB", 49152), ("BW_POSSIBLESPECIES.SPDB", 16384),
     ("BW_SPOTS.SPDB", 16384)])


# --------------------------------------------------------------------------- Heading

def test_heading_equality_is_by_value_and_order_free():
    h1 = Heading.of({"a": INT, "b": STRING})
    h2 = Heading.of([("b", STRING), ("a", INT)])
    assert h1 == h2 and hash(h1) == hash(h2)
    assert len({h1, h2}) == 1
    assert h1 != Heading.of({"a": INT, "b": INT})
    assert h1 != Heading.of({"a": INT})


def test_heading_names_are_canonical_lowercase():
    h = Heading.of({"PageSize": INT, "FileName": STRING})
    assert h.names == ("filename", "pagesize")
    assert h == Heading.of({"pagesize": INT, "filename": STRING})
    assert "PAGESIZE" in h and "pagesize" in h and "PageSize" in h
    assert h["PAGESIZE"] == INT
    assert str(h) == "{filename: STRING, pagesize: INT}"


def test_heading_rejects_a_name_given_twice_in_another_case():
    with pytest.raises(sira.DuplicateAttribute) as info:
        Heading.of([("a", INT), ("A", STRING)])
    assert info.value.attribute == "a"


def test_heading_unknown_attribute_names_it():
    with pytest.raises(UnknownAttribute) as info:
        Heading.of({"a": INT})["zz"]
    assert info.value.attribute == "zz" and "zz" in str(info.value)


def test_heading_accepts_type_names():
    assert Heading.of({"a": "int", "b": "string"}) == Heading.of({"a": INT, "b": STRING})


# --------------------------------------------------------------------------- Tuple

def test_tuple_equality_and_hash_by_value():
    t1 = Tuple.from_dict({"a": INT, "b": STRING}, {"A": 1, "b": "x"})
    t2 = Tuple.from_dict({"B": STRING, "a": INT}, {"b": "x", "a": 1})
    assert t1 == t2 and hash(t1) == hash(t2)
    assert t1["A"] == 1 and t1["b"] == "x"
    assert t1.to_dict() == {"a": 1, "b": "x"}
    assert t1 != Tuple.from_dict({"a": INT, "b": STRING}, {"a": 2, "b": "x"})
    assert repr(t1) == "tuple(a(1) b(string(x)))"


def test_tuple_is_immutable():
    t = Tuple.from_dict({"a": INT}, {"a": 1})
    with pytest.raises(AttributeError):
        t.values = (2,)


# --------------------------------------------------------------------------- Relation

def test_relation_equality_ignores_row_order_and_duplicates():
    r1 = Relation.from_rows({"a": INT, "b": STRING}, [(1, "x"), (2, "y"), (1, "x")])
    r2 = Relation.from_rows({"b": STRING, "a": INT}, [{"b": "y", "a": 2}, {"a": 1, "b": "x"}])
    assert r1 == r2 and hash(r1) == hash(r2)
    assert len(r1) == r1.cardinality == 2
    assert {r1: "v"}[r2] == "v"


def test_relations_with_equal_bodies_but_different_headings_differ():
    assert Relation.from_rows({"a": INT}, []) != Relation.from_rows({"b": INT}, [])
    assert Relation.from_rows({"a": INT}, []) != TABLE_DUM


def test_relation_is_immutable_and_survives_copy_and_pickle():
    with pytest.raises(AttributeError):
        DBMSFILE.body = frozenset()
    assert copy.deepcopy(DBMSFILE) == DBMSFILE
    assert pickle.loads(pickle.dumps(DBMSFILE)) == DBMSFILE


@settings(max_examples=100, deadline=None)
@given(relations())
def test_relation_hash_equality_and_row_round_trip(r):
    again = Relation.from_rows(r.heading, list(reversed(r.to_rows())))
    assert again == r and hash(again) == hash(r)
    assert Relation.from_rows(r.heading, [tuple(d[n] for n in r.heading.names)
                                          for d in r.to_rows()]) == r


def test_from_rows_with_dicts_and_sequences():
    by_dict = Relation.from_rows({"pagesize": INT, "filename": STRING},
                                 [{"FileName": "A", "PAGESIZE": 1}])
    # a sequence follows the order the heading was written in: pagesize, filename
    by_seq = Relation.from_rows({"pagesize": INT, "filename": STRING}, [(1, "A")])
    assert by_dict == by_seq
    assert by_dict.to_rows() == [{"filename": "A", "pagesize": 1}]
    assert Tuple.from_dict(by_dict.heading, {"filename": "A", "pagesize": 1}) in by_dict


def test_positional_rows_follow_the_order_the_heading_was_written():
    by_mapping = Relation.from_rows({"name": STRING, "dept": STRING}, [("Alice", "Sales")])
    by_pairs = Relation.from_rows([("name", STRING), ("dept", STRING)], [("Alice", "Sales")])
    assert by_mapping.to_rows() == [{"dept": "Sales", "name": "Alice"}]
    assert by_pairs == by_mapping


def test_positional_rows_with_a_heading_object_follow_its_sorted_names():
    h = Heading.of({"name": STRING, "dept": STRING})
    assert h.names == ("dept", "name")
    assert Relation.from_rows(h, [("Sales", "Alice")]).to_rows() == \
        [{"dept": "Sales", "name": "Alice"}]


def test_a_string_is_not_a_row_of_characters():
    with pytest.raises(SiraTypeError):
        Relation.from_rows({"a": STRING, "b": STRING}, ["ab"])


def test_from_rows_rejects_bad_rows():
    h = {"a": INT, "b": STRING}
    with pytest.raises(UnknownAttribute) as info:
        Relation.from_rows(h, [{"a": 1, "b": "x", "zz": 3}])
    assert info.value.attribute == "zz"
    with pytest.raises(SiraTypeError) as info:
        Relation.from_rows(h, [{"a": 1}])
    assert "b" in info.value.expected
    with pytest.raises(SiraTypeError):
        Relation.from_rows(h, [(1,)])
    with pytest.raises(SiraTypeError) as info:
        Relation.from_rows(h, [("x", 1)])  # sequence order is a, b
    assert "'a'" in str(info.value)


def test_the_constructors_check_what_they_are_not_given_as_engine_values():
    # Relation(heading, rows) is the call users write first: with a mapping for the heading or
    # a list for the body it is checked as from_rows checks it (duplicates collapse, wrong
    # values are refused), never kept as given (a dict heading used to pass through and fail
    # later as "built for {a: INT}" against "{'a': INT}"; duplicates counted twice)
    r = Relation({"ts": LONG, "k": INT}, [{"ts": 1, "k": 2}, (1, 2), {"TS": 1, "K": 2}])
    assert type(r.heading) is Heading and len(r) == 1 and r.cardinality == 1
    assert r == Relation.from_rows({"ts": LONG, "k": INT}, [(1, 2)])
    assert sira.evaluate("project(s, (k))", {"s": r}).to_rows() == [{"k": 2}]
    with pytest.raises(SiraTypeError) as info:
        Relation({"a": INT}, [{"a": "x"}])
    assert "'a'" in str(info.value)
    with pytest.raises(UnknownAttribute):
        Relation(Heading.of({"a": INT}), [{"b": 1}])
    t = Tuple({"b": INT, "a": STRING}, (1, "x"))  # positional values in the written order
    assert type(t.heading) is Heading and t.to_dict() == {"a": "x", "b": 1}
    assert t == Tuple.from_dict({"a": STRING, "b": INT}, {"a": "x", "b": 1})
    with pytest.raises(SiraTypeError):
        Tuple({"a": INT}, {"a": 1.5})
    # Heading(...) too: a mapping or unsorted pairs used to make a heading unequal to the
    # same heading made by Heading.of (and one that failed to print)
    assert Heading({"B": INT, "a": "string"}) == Heading.of({"a": STRING, "b": INT})
    assert Heading((("b", INT), ("a", INT))).names == ("a", "b")
    with pytest.raises(DuplicateAttribute):
        Heading((("a", INT), ("A", INT)))
    # a row naming one attribute twice in two cases kept the last value
    with pytest.raises(DuplicateAttribute, match="'a'"):
        Relation.from_rows({"a": INT}, [{"a": 1, "A": 2}])


def test_to_rows_is_sorted_and_deterministic():
    rows = [("b", 2, True), ("a", 10, False), ("a", 2, True), ("a", 2, False)]
    h = {"s": STRING, "n": INT, "f": BOOLEAN}
    dicts = [{"s": s, "n": n, "f": f} for s, n, f in rows]
    r1 = Relation.from_rows(h, dicts)
    r2 = Relation.from_rows(h, list(reversed(dicts)))
    assert r1.to_rows() == r2.to_rows()
    # sorted by the heading's attribute order (f, n, s), by value (10 after 2, False first)
    assert r1.to_rows() == [
        {"f": False, "n": 2, "s": "a"}, {"f": False, "n": 10, "s": "a"},
        {"f": True, "n": 2, "s": "a"}, {"f": True, "n": 2, "s": "b"}]
    assert [t.to_dict() for t in r1] == r1.to_rows()


# --------------------------------------------------------------------------- DEE and DUM

def test_table_dee_and_table_dum():
    assert TABLE_DEE.heading == Heading() == TABLE_DUM.heading
    assert len(TABLE_DEE) == 1 and len(TABLE_DUM) == 0
    assert bool(TABLE_DEE) and not bool(TABLE_DUM)
    assert TABLE_DEE != TABLE_DUM
    assert Relation.from_rows({}, [()]) == TABLE_DEE
    assert Relation.from_rows({}, [{}, {}]) == TABLE_DEE
    assert Relation.from_rows({}, []) == TABLE_DUM
    assert sira.evaluate(L(DBMSFILE).project(())) == TABLE_DEE
    assert sira.evaluate(L(DBMSFILE).restrict(lit(False)).project(())) == TABLE_DUM
    assert sira.evaluate("TABLE_DEE") == TABLE_DEE and sira.evaluate("table_dum") == TABLE_DUM
    assert repr(L(TABLE_DEE)) == "TABLE_DEE" and repr(L(TABLE_DUM)) == "TABLE_DUM"


# --------------------------------------------------------------------------- printing

def test_printing_a_small_relation():
    r = Relation.from_rows({"filename": STRING, "pagesize": INT},
                           [("DATABASECATALOG.SPDB", 32768), ("BW_SPOTS.SPDB", 16384)])
    assert str(r) == (
        "+----------------------+----------+\n"
        "| FILENAME             | PAGESIZE |\n"
        "| STRING               | INT      |\n"
        "+----------------------+----------+\n"
        "| BW_SPOTS.SPDB        | 16384    |\n"
        "| DATABASECATALOG.SPDB | 32768    |\n"
        "+----------------------+----------+\n"
        "2 tuples")


def test_printing_an_empty_relation_and_one_tuple():
    assert str(Relation.from_rows({"a": INT}, [])) == (
        "+-----+\n| A   |\n| INT |\n+-----+\n+-----+\n0 tuples")
    assert str(Relation.from_rows({"b": BOOLEAN}, [(True,)])) == (
        "+---------+\n| B       |\n| BOOLEAN |\n+---------+\n| True    |\n+---------+\n1 tuple")


def test_printing_a_nested_rva():
    r = Relation.from_rows({"filename": STRING, "pagesize": INT},
                           [("DATABASECATALOG.SPDB", 32768), ("BW_SPOTS.SPDB", 16384)])
    g = sira.evaluate(L(r).group(files=("filename",)))
    assert str(g) == (
        "+--------------------------+----------+\n"
        "| FILES                    | PAGESIZE |\n"
        "| RELATION                 | INT      |\n"
        "+--------------------------+----------+\n"
        "| +---------------+        | 16384    |\n"
        "| | FILENAME      |        |          |\n"
        "| | STRING        |        |          |\n"
        "| +---------------+        |          |\n"
        "| | BW_SPOTS.SPDB |        |          |\n"
        "| +---------------+        |          |\n"
        "| +----------------------+ | 32768    |\n"
        "| | FILENAME             | |          |\n"
        "| | STRING               | |          |\n"
        "| +----------------------+ |          |\n"
        "| | DATABASECATALOG.SPDB | |          |\n"
        "| +----------------------+ |          |\n"
        "+--------------------------+----------+\n"
        "2 tuples")


def test_printing_table_dee_and_table_dum():
    assert str(TABLE_DEE) == "TABLE_DEE (no attributes, one tuple: the empty tuple)"
    assert str(TABLE_DUM) == "TABLE_DUM (no attributes, no tuples)"


def test_repr_is_the_text_literal_and_parses_back():
    r = Relation.from_rows({"a": INT, "b": STRING}, [(2, "y"), (1, "x")])
    assert repr(r) == ("relation(heading(a(int) b(string)) "
                       "body(tuple(a(1) b(string(x))) tuple(a(2) b(string(y)))))")
    assert sira.evaluate(repr(r)) == r
    g = sira.evaluate(L(r).group(g=("b",)))
    assert sira.evaluate(repr(g)) == g
    assert g.heading.type_of("g") == RelationType(Heading.of({"b": STRING}))


# --------------------------------------------------------------------------- scalar types

def test_int_range_is_32_bit_signed():
    assert INT.check(2**31 - 1) == 2147483647
    assert INT.check(-2**31) == -2147483648
    for bad in (2**31, -2**31 - 1):
        with pytest.raises(IntOverflow) as info:
            INT.check(bad)
        assert (info.value.type, info.value.value) == ("INT", bad)
        assert str(bad) in str(info.value) and "INT" in str(info.value)
    assert LONG.check(2**63 - 1) == 2**63 - 1
    with pytest.raises(IntOverflow):
        LONG.check(2**63)
    with pytest.raises(IntOverflow):
        Relation.from_rows({"a": INT}, [(2**31,)])


def test_int_rejects_booleans_and_floats():
    for bad in (True, 1.0, "1"):
        with pytest.raises(SiraTypeError) as info:
            INT.check(bad)
        assert info.value.expected == "INT"


def test_a_relation_valued_or_tuple_valued_value_may_be_written_out():
    # a list of rows for a relation-valued attribute and a mapping for a tuple-valued one were
    # refused: every nested value had to be built as a Relation or Tuple first
    inner = Heading.of({"x": INT})
    r = Relation({"k": INT, "r": RelationType(inner), "t": sira.TupleType(inner)},
                 [{"k": 1, "r": [{"x": 1}, (2,), {"X": 2}], "t": {"x": 5}}])
    (row,) = r.to_rows()
    assert row["r"] == Relation.from_rows(inner, [(1,), (2,)])
    assert row["t"] == Tuple.from_dict(inner, {"x": 5})
    for bad in ({"x": 1}, "xy", [{"x": "a"}], [{"y": 1}]):
        with pytest.raises(SiraError):
            Relation({"r": RelationType(inner)}, [{"r": bad}])
    with pytest.raises(SiraTypeError):
        Relation({"t": sira.TupleType(inner)}, [{"t": (5,)}])  # by name only


def test_numpy_and_other_numbers_are_values_of_their_type_never_booleans():
    # values taken out of a pandas or numpy column are numpy scalars; they are numbers,
    # checked and stored as Python ints and floats (a numpy boolean is still no number)
    np = pytest.importorskip("numpy")
    r = Relation({"a": INT, "x": FLOAT}, [{"a": np.int64(3), "x": np.float32(0.5)}])
    (row,) = r.body
    assert row == (3, 0.5) and (type(row[0]), type(row[1])) == (int, float)
    assert INT.check(np.uint8(7)) == 7 and FLOAT.check(np.int16(-2)) == -2.0
    with pytest.raises(IntOverflow):
        INT.check(np.int64(2**40))
    for bad in (np.bool_(True), True):
        for t in (INT, FLOAT):
            with pytest.raises(SiraTypeError):
                t.check(bad)
    with pytest.raises(SiraValueError):
        FLOAT.check(np.float64("nan"))
    literal = lit(np.int64(3))  # a literal too, its value a Python int
    assert literal.type == INT and type(literal.value) is int
    assert lit(np.int64(2**40)).type == LONG and lit(np.float32(0.5)).type == FLOAT
    with pytest.raises(FloatOverflow) as info:  # was Python's own OverflowError
        FLOAT.check(10**400)
    assert "about 401 digits" in str(info.value)


def test_literal_integers_pick_the_smallest_type():
    assert sira.evaluate("extend(TABLE_DEE, (x(2147483647)))").heading["x"] == INT
    assert sira.evaluate("extend(TABLE_DEE, (x(2147483648)))").heading["x"] == LONG


def test_max_over_empty_int_is_the_minimum_int():
    empty = Relation.from_rows({"n": INT}, [])
    assert sira.evaluate(L(empty).aggregate(m=("max", attr("n")))).to_rows() == \
        [{"m": -2147483648}]


def test_float_rejects_nan():
    with pytest.raises(SiraValueError) as info:
        FLOAT.check(math.nan)
    assert isinstance(info.value, ValueError)
    assert "NaN" in str(info.value)
    with pytest.raises(SiraValueError):
        Relation.from_rows({"f": FLOAT}, [(math.nan,)])
    with pytest.raises(SiraValueError) as info:
        sira.evaluate("extend(TABLE_DEE, (x(minus(1e400, 1e400))))")
    assert info.value.operator == "minus"


def test_float_minus_zero_is_zero():
    assert Relation.from_rows({"f": FLOAT}, [(-0.0,), (0.0,)]) == \
        Relation.from_rows({"f": FLOAT}, [(0.0,)])
    assert FLOAT.check(1) == 1.0 and type(FLOAT.check(1)) is float


def test_from_rows_range_errors_name_the_attribute():
    with pytest.raises(IntOverflow) as info:
        Relation.from_rows({"pagesize": INT}, [(2**31,)])
    assert "pagesize" in str(info.value)
    with pytest.raises(SiraValueError) as info:
        Relation.from_rows({"ratio": FLOAT}, [(math.nan,)])
    assert "ratio" in str(info.value)


# --------------------------------------------------------------------------- intervals

def test_interval_from_to_includes_both_ends():
    assert INTINTERVAL.select_closed(4, 7) == Interval(4, 8)
    assert INTINTERVAL.format(Interval(4, 8)) == "BEGIN(4)END(8)"
    r = sira.evaluate("relation(body(tuple(x(intinterval(from(4)to(7))))))")
    assert r.to_rows() == [{"x": Interval(4, 8)}]
    with pytest.raises(SiraError):
        sira.evaluate("relation(body(tuple(x(intinterval(begin(5)end(5))))))")


def test_empty_interval_from_iintersect_prints_as_the_seed():
    pss = Relation.from_rows({"ps": INTINTERVAL},
                             [(Interval(16384, 16385),), (Interval(49152, 49153),),
                              (Interval(32768, 32769),)])
    res = sira.evaluate("aggregate(PSS, (iintersect(iintersect(ps))))", {"PSS": pss})
    (value,) = [t["iintersect"] for t in res]
    assert value.empty
    assert INTINTERVAL.format(value) == "BEGIN(16384)END(16384)"
    assert "| BEGIN(16384)END(16384) |" in str(res)
    # all empty intervals are one value
    assert value == Interval(16384, 16384).intersect(Interval(1, 2)) == Interval(7, 7)
    assert len({value, Interval(7, 7)}) == 1
    # its literal (no selector makes an empty interval) parses back to the one empty value
    assert sira.evaluate(sira.parse(repr(res))) == res
    assert INTINTERVAL.literal(value) == \
        "iintersect(intinterval(begin(0)end(1)), intinterval(begin(1)))"


# --------------------------------------------------------------------------- AVERAGE

def test_average_aggregation_reproduces_the_seed():
    res = sira.evaluate(
        "aggregate(DBMSFILE, (avgpagesize(plus(average(count(1)value(tofloat(pagesize)))))))",
        {"DBMSFILE": DBMSFILE})
    (avg,) = [t["avgpagesize"] for t in res]
    assert avg == Average(5, 29491.199999999997)
    assert avg.value == 29491.199999999997 and avg.value != 147456 / 5
    assert res.heading["avgpagesize"] == AVERAGE
    assert "COUNT(5)VALUE(29491.199999999997)" in str(res)
    assert repr(avg) == "average(count(5)value(29491.199999999997))"


def test_average_does_not_depend_on_insertion_order():
    rows = [(f"f{i}", p) for i, p in enumerate([32768, 32768, 49152, 16384, 16384])]
    results = set()
    for order in (rows, rows[::-1], rows[2:] + rows[:2]):
        r = Relation.from_rows({"filename": STRING, "pagesize": INT}, order)
        res = sira.evaluate(L(r).aggregate(
            a=("plus", sira.call("average", lit(1), sira.call("tofloat", attr("pagesize"))))))
        results.add(res)
    assert len(results) == 1


def test_average_of_an_empty_relation_is_count_zero():
    empty = Relation.from_rows({"pagesize": INT}, [])
    res = sira.evaluate(L(empty).aggregate(
        a=("plus", sira.call("average", lit(1), sira.call("tofloat", attr("pagesize"))))))
    assert res.to_rows() == [{"a": Average(0, 0.0)}]


def test_average_plus_combines_counts():
    a = Average(2, 10.0).plus(Average(3, 20.0))
    assert a.count == 5 and math.isclose(a.value, 16.0)
    assert Average(0, 0.0).plus(Average(0, 0.0)) == Average(0, 0.0)
