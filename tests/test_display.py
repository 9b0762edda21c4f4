"""Relations shown to people: text tables, a bounded repr, notebook HTML."""

from __future__ import annotations

import datetime
import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import (DATE, INT, INTINTERVAL, STRING, TABLE_DEE, TABLE_DUM, Heading, Interval,
                  Relation, RelationType)
from sira.display import DEFAULT_LIMIT, first_tuples, format_table, html_table
from sira.errors import ParseError, SiraValueError

from strategies import relations, rva_relations

SETTINGS = settings(max_examples=60, deadline=None)


def numbers(n: int) -> Relation:
    return Relation.from_rows({"n": INT}, [(i,) for i in range(n)])


def nested(inner_size: int) -> Relation:
    inner = numbers(inner_size)
    return Relation.from_rows({"k": INT, "r": RelationType(inner.heading)}, [(1, inner)])


# ------------------------------------------------------------------------------- small
def test_a_small_relation_prints_as_the_whole_table():
    r = Relation.from_rows({"filename": STRING, "pagesize": INT},
                           [("DATABASECATALOG.SPDB", 32768), ("BW_SPOTS.SPDB", 16384)])
    assert str(r) == "\n".join([
        "+----------------------+----------+",
        "| FILENAME             | PAGESIZE |",
        "| STRING               | INT      |",
        "+----------------------+----------+",
        "| BW_SPOTS.SPDB        | 16384    |",
        "| DATABASECATALOG.SPDB | 32768    |",
        "+----------------------+----------+",
        "2 tuples"])


def test_a_relation_of_exactly_the_limit_is_not_cut():
    r = numbers(DEFAULT_LIMIT)
    assert "more tuple" not in str(r)
    assert "more tuple" not in repr(r)
    assert str(r).endswith(f"{DEFAULT_LIMIT} tuples")


@SETTINGS
@given(st.one_of(relations(), rva_relations()))
def test_repr_of_a_small_relation_is_its_literal_and_parses_back(r):
    assert repr(r) == r.literal()
    assert sira.evaluate(sira.parse(repr(r))) == r


# ------------------------------------------------------------------------------- large
def test_str_of_a_large_relation_shows_the_first_tuples_then_how_many_more():
    lines = str(numbers(1000)).splitlines()
    rows = [line for line in lines if line.startswith("| ") and line[2].isdigit()]
    assert [int(row.strip("| ")) for row in rows] == list(range(DEFAULT_LIMIT))
    assert lines[-2:] == ["... and 980 more tuples", "1000 tuples"]


def test_repr_of_a_200000_tuple_relation_is_short():
    text = repr(numbers(200_000))
    assert len(text) < 1000
    assert text.endswith("tuple(n(19)) ... and 199980 more tuples))")


def test_a_cut_repr_is_refused_by_the_parser():
    with pytest.raises(ParseError):
        sira.parse(repr(numbers(DEFAULT_LIMIT + 1)))


def test_literal_is_the_whole_relation_whatever_its_size():
    r = numbers(500)
    assert sira.evaluate(sira.parse(r.literal())) == r


def test_to_table_limit_none_shows_every_tuple():
    table = numbers(300).to_table(limit=None)
    assert "more tuple" not in table
    assert "| 299 |" in table and table.endswith("300 tuples")


def test_to_table_with_a_limit_of_one_says_one_more_tuple():
    assert numbers(2).to_table(limit=1).splitlines()[-2] == "... and 1 more tuple"


def test_str_uses_the_default_limit_of_to_table():
    default = inspect.signature(Relation.to_table).parameters["limit"].default
    assert default == DEFAULT_LIMIT
    assert str(numbers(50)) == numbers(50).to_table()


@SETTINGS
@given(relations(min_size=1), st.integers(0, 9))
def test_the_shown_tuples_are_the_first_in_the_canonical_order(r, limit):
    shown, left_out = first_tuples(r, limit)
    assert shown == r.sorted_body()[:limit]
    assert left_out == max(0, len(r) - limit)


def test_intervals_and_dates_are_cut_in_their_canonical_order():
    r = Relation.from_rows({"d": DATE, "x": INTINTERVAL},
                           [(datetime.date(2020, 1, 1 + i % 28), Interval(i, i + 1 + i % 3))
                            for i in range(60)])
    shown, _ = first_tuples(r, 5)
    assert shown == r.sorted_body()[:5]


def test_nested_relations_are_cut_in_tables_and_repr():
    r = nested(100)
    table = str(r)
    assert "... and 80 more tuples" in table
    assert "| 99 " not in table
    assert "... and 80 more tuples)" in repr(r)
    assert len(repr(nested(100_000))) < 1000


def test_the_string_of_a_large_relation_valued_attribute_is_whole():
    r = nested(30)
    got = sira.evaluate("extend(R, (s(the_string(r))))", {"r": r})
    (row,) = got.to_rows()
    assert row["s"] == row["r"].literal()
    assert "more tuple" not in row["s"]


def test_a_printed_tree_keeps_its_large_literal_whole():
    node = sira.literal(numbers(100)).project("n")
    assert sira.evaluate(sira.parse(repr(node))) == numbers(100)


@pytest.mark.parametrize("limit", [-1, 2.5, "3", True])
def test_a_limit_must_be_a_non_negative_integer_or_none(limit):
    with pytest.raises(SiraValueError) as err:
        numbers(3).to_table(limit=limit)
    assert err.value.value == limit


# ------------------------------------------------------------------------------- HTML
def test_html_shows_names_types_first_tuples_more_and_cardinality():
    r = Relation.from_rows({"filename": STRING, "pagesize": INT},
                           [(f"F{i:03}", i) for i in range(25)])
    page = r._repr_html_()
    assert page.index(">FILENAME<") < page.index(">PAGESIZE<") < page.index(">STRING<")
    assert ">INT<" in page
    assert page.count("<tr>") == 2 + DEFAULT_LIMIT + 1  # two heading rows, tuples, "more"
    assert ">F000<" in page and ">F019<" in page and ">F020<" not in page
    assert "… and 5 more tuples" in page
    assert page.endswith("<small>25 tuples</small></div>")


def test_html_escapes_values():
    r = Relation.from_rows({"s": STRING}, [("<script>alert('x')</script> & co",)])
    page = r._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; co" in page


def test_no_value_breaks_its_table_and_distinct_strings_look_distinct():
    # a line feed in a value broke the row in two, a tab pushed the border out, and a CJK
    # character (two columns on a terminal) was counted as one
    r = Relation.from_rows({"s": STRING, "n": INT},
                           [("a\nb", 1), ("a\\nb", 2), ("tab\there", 3), ("漢字", 4),
                            ("e\u0301", 5), ("\x00\u2028", 6)])
    lines = str(r).split("\n")
    assert len(lines) == 4 + 6 + 1 + 1  # rule, names, types, rule; six rows; rule; count
    from sira.display import width
    assert len({width(line) for line in lines[:-1]}) == 1  # every line as wide on a terminal
    cells = [line.split("|")[2].strip() for line in lines[4:10]]  # N, then S
    assert "a␊b" in cells and "a\\nb" in cells and "tab␉here" in cells  # not alike
    assert "␀<U+2028>" in cells and "漢字" in cells
    assert "a␊b" in r._repr_html_() and "white-space: pre" in r._repr_html_()
    assert sira.parse(repr(r)).value == r  # repr keeps the exact values


def test_html_of_table_dee_and_table_dum_names_them():
    assert "TABLE_DEE" in TABLE_DEE._repr_html_()
    assert "TABLE_DUM" in TABLE_DUM._repr_html_()


def test_html_nests_relation_valued_attributes_as_tables_cut_too():
    page = nested(30)._repr_html_()
    assert page.count("<table") == 2
    assert "… and 10 more tuples" in page
    assert page.count("1 tuple<") == 1  # the outer cardinality; the inner table has no footer


def test_html_and_text_tables_agree_on_what_they_show():
    r = numbers(45)
    assert first_tuples(r, 7)[1] == 38
    assert "… and 38 more tuples" in html_table(r, limit=7)
    assert "... and 38 more tuples" in format_table(r, limit=7)


def test_a_heading_without_tuples_still_shows_its_types():
    r = Relation(Heading.of({"a": INT}), frozenset())
    assert ">INT<" in r._repr_html_() and "0 tuples" in r._repr_html_()
    assert str(r).splitlines()[2] == "| INT |"
