"""sira.io: relations in and out of CSV, JSON, Parquet, Arrow and pandas with one type mapping;
cells read as literals, NULL/NaN refused unless asked, duplicates reported."""

from __future__ import annotations

import datetime
import io
import json
import math
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import (AVERAGE, BIGINT, BOOLEAN, DATE, DATEINTERVAL, FLOAT, FLOATINTERVAL, INT,
                  INTINTERVAL, LONG, LONGINTERVAL, STRING, TABLE_DEE, TABLE_DUM, TIMESTAMP,
                  TIMESTAMPINTERVAL, Average, Heading, Interval, Relation, RelationType,
                  ReadReport, Tuple, TupleType)
from sira.errors import DataFormatError, DuplicateAttribute, MissingExtra, NullValue
from sira.io import (from_arrow, from_pandas, read_arrow, read_csv, read_json, read_parquet,
                     to_arrow, to_pandas, write_arrow, write_csv, write_json, write_parquet)

from strategies import rva_relations

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

# --------------------------------------------------------------------------- strategies
BIGINT_ARROW = 10 ** 38 - 1  # decimal128(38, 0) holds BIGINTs of up to 38 digits

SCALARS = {
    INT: st.integers(INT.min, INT.max),
    LONG: st.integers(LONG.min, LONG.max),
    BIGINT: st.integers(-BIGINT_ARROW, BIGINT_ARROW),
    FLOAT: st.floats(allow_nan=False),
    STRING: st.text(max_size=8),
    BOOLEAN: st.booleans(),
    DATE: st.dates(),
    TIMESTAMP: st.datetimes(),
}
INTERVALS = {INTINTERVAL: INT, LONGINTERVAL: LONG, DATEINTERVAL: DATE,
             TIMESTAMPINTERVAL: TIMESTAMP, FLOATINTERVAL: FLOAT}
TYPES = list(SCALARS) + list(INTERVALS) + [AVERAGE]


@st.composite
def intervals(draw, point_type):
    """[begin, end) with begin < end, or unbounded above."""
    points = SCALARS[point_type].filter(lambda v: not (isinstance(v, float) and math.isinf(v)))
    begin, end = draw(points), draw(points)
    if begin == end or draw(st.integers(0, 4)) == 0:
        return Interval(min(begin, end), None)
    return Interval(min(begin, end), max(begin, end))


def values_of(t):
    if t in SCALARS:
        return SCALARS[t]
    if t in INTERVALS:
        return intervals(INTERVALS[t])
    if t == AVERAGE:
        return st.builds(Average, st.integers(0, 10 ** 6), st.floats(allow_nan=False))
    raise ValueError(t)


@st.composite
def typed_relations(draw, max_degree=4, max_size=6):
    """A relation over 0..max_degree attributes of random types (scalars, intervals, AVERAGE)."""
    types = draw(st.lists(st.sampled_from(TYPES), max_size=max_degree))
    heading = Heading.of([(f"a{i}", t) for i, t in enumerate(types)])
    rows = draw(st.lists(st.tuples(*[values_of(t) for t in heading.types]), max_size=max_size))
    return Relation.from_rows(heading, rows)


def nested_relations():
    """A relation with a relation-valued attribute (tests/strategies.py) and a tuple-valued one."""
    def with_tuple(r):
        heading = Heading.of(list(r.heading.attributes)
                             + [("t", TupleType(Heading.of({"x": INT, "y": STRING})))])
        rows = [row + (Tuple(Heading.of({"x": INT, "y": STRING}), (len(row), "v")),)
                for row in r.sorted_body()]
        return Relation(heading, frozenset(rows))
    return rva_relations(allow_empty_rva=True).map(with_tuple)


ANY_RELATION = st.one_of(typed_relations(), nested_relations())


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


# --------------------------------------------------------------------------- round trips
@settings(max_examples=60, deadline=None)
@given(ANY_RELATION)
def test_arrow_round_trip_gives_the_same_relation(r):
    assert from_arrow(to_arrow(r)) == r


@settings(max_examples=40, deadline=None)
@given(ANY_RELATION)
def test_pandas_round_trip_gives_the_same_relation(r):
    assert from_pandas(to_pandas(r)) == r


@settings(max_examples=30, deadline=None)
@given(ANY_RELATION)
def test_parquet_file_round_trip_gives_the_same_relation(folder, r):
    path = folder / "r.parquet"
    write_parquet(r, path)
    assert read_parquet(path) == r


@settings(max_examples=30, deadline=None)
@given(ANY_RELATION)
def test_arrow_ipc_file_round_trip_gives_the_same_relation(folder, r):
    path = folder / "r.arrow"
    write_arrow(r, path)
    assert read_arrow(path) == r


@settings(max_examples=60, deadline=None)
@given(ANY_RELATION)
def test_csv_file_round_trip_gives_the_same_relation(folder, r):
    path = folder / "r.csv"
    write_csv(r, path)
    assert read_csv(path) == r


@settings(max_examples=60, deadline=None)
@given(ANY_RELATION)
def test_json_file_round_trip_gives_the_same_relation(folder, r):
    path = folder / "r.json"
    write_json(r, path)
    assert read_json(path) == r


def test_relation_methods_delegate_to_sira_io(tmp_path):
    r = Relation.from_rows({"a": INT, "b": STRING}, [(1, "x"), (2, "y")])
    r.write_csv(tmp_path / "r.csv")
    r.write_json(tmp_path / "r.json")
    r.write_parquet(tmp_path / "r.parquet")
    assert read_csv(tmp_path / "r.csv") == read_json(tmp_path / "r.json") == r
    assert sira.read_parquet(tmp_path / "r.parquet") == r
    assert sira.from_arrow(r.to_arrow()) == sira.from_pandas(r.to_pandas()) == r


def test_bigint_of_thousands_of_digits_round_trips_through_csv_and_json(tmp_path):
    huge = -(10 ** 5000) + 7
    r = Relation.from_rows({"n": BIGINT}, [(huge,), (3,)])
    write_csv(r, tmp_path / "r.csv")
    write_json(r, tmp_path / "r.json")
    assert read_csv(tmp_path / "r.csv") == r
    assert read_json(tmp_path / "r.json") == r


def test_bigint_beyond_38_digits_is_refused_by_arrow_naming_the_attribute():
    r = Relation.from_rows({"n": BIGINT}, [(10 ** 40,)])
    with pytest.raises(DataFormatError, match="'n'.*38 digits"):
        to_arrow(r)


def test_nullary_relations_round_trip_through_every_format(tmp_path):
    for r in (TABLE_DEE, TABLE_DUM):
        for suffix, write, read in ((".csv", write_csv, read_csv), (".json", write_json, read_json),
                                    (".parquet", write_parquet, read_parquet),
                                    (".arrow", write_arrow, read_arrow)):
            path = tmp_path / f"r{len(r)}{suffix}"
            write(r, path)
            assert read(path) == r, (r, suffix)
        assert from_pandas(to_pandas(r)) == r
        assert from_arrow(to_arrow(r)) == r


# --------------------------------------------------------------------------- the type mapping
def test_arrow_columns_have_the_documented_types():
    r = Relation.from_rows(
        {"i": INT, "l": LONG, "b": BIGINT, "f": FLOAT, "s": STRING, "o": BOOLEAN, "d": DATE,
         "t": TIMESTAMP, "v": INTINTERVAL, "a": AVERAGE},
        [(1, 2, 3, 1.5, "x", True, datetime.date(2020, 1, 2), datetime.datetime(2020, 1, 2, 3),
          Interval(1, None), Average(2, 1.5))])
    schema = to_arrow(r).schema
    assert {f.name: str(f.type) for f in schema} == {
        "a": "struct<count: int64 not null, value: double not null>",
        "b": "decimal128(38, 0)", "d": "date32[day]", "f": "double", "i": "int32",
        "l": "int64", "o": "bool", "s": "string", "t": "timestamp[us]",
        "v": "struct<begin: int32 not null, end: int32>"}
    assert to_arrow(r).column("v").to_pylist() == [{"begin": 1, "end": None}]


def test_relation_valued_attributes_are_lists_of_structs_in_canonical_order():
    inner = Heading.of({"x": INT})
    r = Relation.from_rows({"k": INT, "r": RelationType(inner)},
                           [(1, Relation.from_rows(inner, [(3,), (1,), (2,)]))])
    column = to_arrow(r).column("r")
    assert str(column.type) == "list<item: struct<x: int32 not null> not null>"
    assert column.to_pylist() == [[{"x": 1}, {"x": 2}, {"x": 3}]]


def test_a_struct_with_begin_and_end_reads_as_an_interval_without_metadata():
    table = pa.table({"during": pa.array([{"begin": 1, "end": 5}, {"begin": 7, "end": None}],
                                         pa.struct([("begin", pa.int64()),
                                                    ("end", pa.int64())]))})
    r = from_arrow(table)
    assert r.heading == Heading.of({"during": LONGINTERVAL})
    assert set(r.to_rows()[i]["during"] for i in range(2)) == {Interval(1, 5), Interval(7, None)}


def test_pandas_default_int64_is_long_and_types_overrides_it():
    df = pd.DataFrame({"name": ["Ann", "Bob"], "age": [31, 42]})
    assert from_pandas(df).heading == Heading.of({"name": STRING, "age": LONG})
    assert from_pandas(df, types={"age": "int"}).heading == Heading.of({"name": STRING,
                                                                       "age": INT})


def test_types_override_out_of_range_is_an_error_not_a_wrap():
    df = pd.DataFrame({"n": [2 ** 40]})
    with pytest.raises(DataFormatError, match="'n'"):
        from_pandas(df, types={"n": INT})


def test_decimal_with_a_scale_is_refused_with_a_hint():
    import decimal
    table = pa.table({"price": pa.array([decimal.Decimal("1.25")], pa.decimal128(10, 2))})
    with pytest.raises(DataFormatError, match="float64"):
        from_arrow(table)


def test_decimal_of_scale_0_reads_as_bigint():
    import decimal
    table = pa.table({"n": pa.array([decimal.Decimal(10 ** 30)], pa.decimal128(31, 0))})
    assert from_arrow(table).to_rows() == [{"n": 10 ** 30}]


def test_timestamps_with_a_time_zone_read_as_their_utc_instant_and_are_counted():
    paris = pa.array([datetime.datetime(2015, 7, 30, 10)], pa.timestamp("us", tz="Europe/Paris"))
    report = ReadReport()
    r = from_arrow(pa.table({"t": paris}), report=report)
    assert r.to_rows() == [{"t": datetime.datetime(2015, 7, 30, 10)}]  # stored as UTC
    assert report.converted_to_utc == 1
    report = ReadReport()
    r = read_csv(io.StringIO("t:timestamp\n2015-07-30T12:00:00+02:00\n"), report=report)
    assert r.to_rows() == [{"t": datetime.datetime(2015, 7, 30, 10)}]
    assert report.converted_to_utc == 1
    report = ReadReport()
    r = read_json(io.StringIO('{"heading": {"t": "timestamp"}, '
                              '"body": [{"t": "2015-07-30T12:00:00+02:00"}]}'), report=report)
    assert r.to_rows() == [{"t": datetime.datetime(2015, 7, 30, 10)}]
    assert report.converted_to_utc == 1


def test_nanosecond_timestamps_are_refused_unless_whole_microseconds():
    whole = pa.array([1_000_000_000], pa.timestamp("ns"))
    assert from_arrow(pa.table({"t": whole})).to_rows() == [
        {"t": datetime.datetime(1970, 1, 1, 0, 0, 1)}]
    with pytest.raises(DataFormatError, match="microsecond"):
        from_arrow(pa.table({"t": pa.array([1_000_000_001], pa.timestamp("ns"))}))


def test_categoricals_read_as_their_values():
    df = pd.DataFrame({"c": pd.Categorical(["a", "b", "a"])})
    assert from_pandas(df).to_rows() == [{"c": "a"}, {"c": "b"}]


def test_named_index_levels_become_attributes_and_row_numbers_do_not():
    df = pd.DataFrame({"v": [1, 2]}, index=pd.Index(["x", "y"], name="k"))
    assert from_pandas(df).heading == Heading.of({"k": STRING, "v": LONG})
    assert from_pandas(pd.DataFrame({"v": [1, 2]}, index=[10, 20])).heading == Heading.of(
        {"v": LONG})


def test_column_names_that_are_not_attribute_names_are_refused():
    with pytest.raises(DataFormatError, match="'first name'"):
        from_pandas(pd.DataFrame({"first name": ["Ann"]}))
    with pytest.raises(DuplicateAttribute):
        from_pandas(pd.DataFrame([[1, 2]], columns=["A", "a"]))


# --------------------------------------------------------------------------- NULL and NaN
@pytest.mark.parametrize("make", [
    lambda: read_csv(io.StringIO("p:float,q:int\n1.5,1\n,2\nnan,3\n"), name="prices"),
    lambda: read_json(io.StringIO('{"heading": {"p": "float", "q": "int"}, "body": '
                                  '[{"p": 1.5, "q": 1}, {"p": null, "q": 2}, {"q": 3}]}'),
                      name="prices"),
    lambda: from_arrow(pa.table({"p": pa.array([1.5, None, float("nan")]),
                                 "q": pa.array([1, 2, 3], pa.int32())}), name="prices"),
    lambda: from_pandas(pd.DataFrame({"p": [1.5, None, float("nan")], "q": [1, 2, 3]}),
                        name="prices"),
], ids=["csv", "json", "arrow", "pandas"])
def test_nulls_and_nans_are_refused_naming_relvar_attribute_and_rows(make):
    with pytest.raises(NullValue) as caught:
        make()
    err = caught.value
    assert (err.relvar, err.attribute, err.count) == ("prices", "p", 2)
    assert "prices" in str(err) and "'p'" in str(err) and "2 rows" in str(err)


def test_nan_alone_is_reported_as_nan():
    with pytest.raises(NullValue) as caught:
        from_arrow(pa.table({"x": pa.array([float("nan"), 1.0])}))
    assert caught.value.value == "NaN" and caught.value.count == 1


def test_parquet_nulls_name_the_file(tmp_path):
    path = tmp_path / "p.parquet"
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"a": pa.array([1, None, None], pa.int32())}), path)
    with pytest.raises(NullValue) as caught:
        read_parquet(path)
    assert caught.value.relvar == str(path) and caught.value.count == 2


def test_nulls_inside_structs_and_lists_are_refused_but_an_open_end_is_not():
    during = pa.array([{"begin": 1, "end": None}, {"begin": None, "end": 3}],
                      pa.struct([("begin", pa.int32()), ("end", pa.int32())]))
    with pytest.raises(NullValue) as caught:
        from_arrow(pa.table({"during": during}))
    assert caught.value.attribute == "during" and caught.value.count == 1
    items = pa.array([[{"x": 1}], [{"x": None}]], pa.list_(pa.struct([("x", pa.int32())])))
    with pytest.raises(NullValue):
        from_arrow(pa.table({"r": items}))


def test_nulls_drop_leaves_those_rows_out_and_reports_them():
    report = ReadReport()
    r = read_csv(io.StringIO("a:int,b:float\n1,1.5\n1,1.5\n,2.5\n3,NaN\n4,NA\n"),
                 nulls="drop", report=report)
    assert r.to_rows() == [{"a": 1, "b": 1.5}]
    assert (report.rows, report.tuples, report.duplicates, report.dropped) == (5, 1, 1, 3)
    assert report.dropped_by_attribute == {"a": 1, "b": 2}
    report = ReadReport()
    df = pd.DataFrame({"a": [1.0, None, 3.0], "s": ["x", "y", None]})
    assert len(from_pandas(df, nulls="drop", report=report)) == 1
    assert report.dropped == 2


def test_an_unknown_null_policy_is_an_error():
    with pytest.raises(DataFormatError, match="nulls="):
        read_csv(io.StringIO("a:int\n1\n"), nulls="keep")


def test_evaluate_refuses_a_dataframe_with_nulls_naming_the_relvar():
    df = pd.DataFrame({"f": [1.0, float("nan")]})
    with pytest.raises(NullValue) as caught:
        sira.evaluate("restrict(R, gt(f, 0.0))", {"R": df})
    assert caught.value.relvar == "R"


# --------------------------------------------------------------------------- data is data
def test_a_csv_cell_is_never_evaluated():
    with pytest.raises(DataFormatError, match="line 2, attribute 'a'"):
        read_csv(io.StringIO('a:int\n"plus(2,3)"\n'))
    with pytest.raises(DataFormatError, match="not a literal"):
        read_csv(io.StringIO('i:intinterval\n"intinterval(from(1)to(plus(1,2)))"\n'))


def test_a_csv_cell_that_would_be_an_expensive_query_fails_fast():
    query = ("cardinality(unpack(relation(heading(x(intinterval)) body(tuple(x(intinterval("
             "from(1)to(100000000)))))), (x)))")
    tracemalloc.start()
    try:
        with pytest.raises(DataFormatError, match="cardinality"):
            read_csv(io.StringIO(f'i:intinterval\n"intinterval(from(1)to({query}))"\n'))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000  # the UNPACK, run, would make 100 M tuples


def test_a_json_string_is_never_evaluated():
    text = '{"heading": {"a": "int"}, "body": [{"a": "plus(2,3)"}]}'
    with pytest.raises(DataFormatError, match="tuple 1, attribute 'a'"):
        read_json(io.StringIO(text))
    text = '{"heading": {"r": "intinterval"}, "body": [{"r": "intinterval(from(1)to(plus(1,1)))"}]}'
    with pytest.raises(DataFormatError, match="not a literal"):
        read_json(io.StringIO(text))


def test_a_text_column_declared_as_a_number_is_read_as_literals():
    df = pd.DataFrame({"a": ["5", "plus(2,3)"]})
    with pytest.raises(DataFormatError, match="row 2"):
        from_pandas(df, types={"a": INT})


def test_literals_of_every_kind_are_read_from_cells():
    text = ("v:intinterval,l:longinterval,a:average,t:tuple(heading(x(int) y(string))),"
            "r:relation(heading(x(int)))\n"
            '"intinterval(from(4)to(7))","longinterval(begin(long(-5)))",'
            '"average(count(2)value(1.5))","tuple(x(1) y(string(a b)))",'
            '"relation(body(tuple(x(1)) tuple(x(2))))"\n')
    row = read_csv(io.StringIO(text)).to_rows()[0]
    assert row["v"] == Interval(4, 8) and row["l"] == Interval(-5, None)
    assert row["a"] == Average(2, 1.5)
    assert row["t"]["y"] == "a b" and len(row["r"]) == 2


# --------------------------------------------------------------------------- JSON
@pytest.mark.parametrize("row", ['{"a": 1, "a": 2}', '{"a": 1, "A": 2}'])
def test_json_objects_with_duplicate_keys_are_refused(row):
    text = '{"heading": {"a": "int"}, "body": [%s]}' % row
    with pytest.raises(DataFormatError, match="tuple 1: key .* twice"):
        read_json(io.StringIO(text))


def test_json_heading_with_case_duplicate_names_is_refused():
    with pytest.raises(DataFormatError, match="heading"):
        read_json(io.StringIO('{"heading": {"a": "int", "A": "int"}, "body": []}'))


def test_json_output_never_holds_infinity_or_nan_tokens(tmp_path):
    r = Relation.from_rows({"x": FLOAT, "a": AVERAGE},
                           [(math.inf, Average(1, -math.inf)), (-math.inf, Average(0, 0.0))])
    write_json(r, tmp_path / "r.json")
    text = (tmp_path / "r.json").read_text()

    def refuse(token):
        raise AssertionError(f"invalid JSON token {token}")
    json.loads(text, parse_constant=refuse)
    assert read_json(tmp_path / "r.json") == r


def test_json_nested_too_deeply_is_a_data_format_error():
    with pytest.raises(DataFormatError, match="nested too deeply"):
        read_json(io.StringIO("[" * 100_000 + "]" * 100_000))


def test_json_missing_attribute_is_a_null():
    text = '{"heading": {"a": "int", "b": "int"}, "body": [{"a": 1}]}'
    with pytest.raises(NullValue) as caught:
        read_json(io.StringIO(text))
    assert caught.value.attribute == "b"


# --------------------------------------------------------------------------- CSV
def test_csv_columns_follow_the_header_order_not_the_alphabet():
    r = read_csv(io.StringIO("name:string,dept:string\nAlice,Sales\n"))
    assert r.to_rows() == [{"dept": "Sales", "name": "Alice"}]
    r = read_csv(io.StringIO("Alice;Sales\n"), header=False, names=["name", "dept"],
                 delimiter=";")
    assert r.to_rows() == [{"dept": "Sales", "name": "Alice"}]


def test_csv_types_are_inferred_from_bare_names():
    text = ("i,l,b,f,o,d,t,s,z\n"
            "1,3000000000,10000000000000000000,1.5,true,2020-01-02,2020-01-02T03:04:05,x,007\n"
            "2,4,5,2,False,2020-01-03,2020-01-03,y,1\n")
    assert read_csv(io.StringIO(text)).heading == Heading.of(
        {"i": INT, "l": LONG, "b": BIGINT, "f": FLOAT, "o": BOOLEAN, "d": DATE,
         "t": TIMESTAMP, "s": STRING, "z": STRING})


def test_csv_types_argument_overrides_the_header_and_inference():
    r = read_csv(io.StringIO("a:int,b\n1,2\n"), types={"a": "long", "b": BIGINT})
    assert r.heading == Heading.of({"a": LONG, "b": BIGINT})
    with pytest.raises(sira.UnknownAttribute):
        read_csv(io.StringIO("a\n1\n"), types={"nosuch": INT})


def test_csv_without_header_needs_names():
    with pytest.raises(DataFormatError, match="names="):
        read_csv(io.StringIO("1,2\n"), header=False)
    r = read_csv(io.StringIO("1\t2\n"), header=False, types={"a": INT, "b": LONG},
                 delimiter="\t")
    assert r.to_rows() == [{"a": 1, "b": 2}]


def test_csv_unterminated_quote_names_the_line():
    with pytest.raises(DataFormatError, match="line 3.*unterminated quote") as caught:
        read_csv(io.StringIO('a,b\n1,x\n2,"y\n3,z\n'))
    assert caught.value.line == 3


def test_csv_bad_cell_names_line_and_attribute():
    with pytest.raises(DataFormatError) as caught:
        read_csv(io.StringIO("a:int,b:date\n1,2020-01-01\n2,2020-13-01\n"))
    assert (caught.value.line, caught.value.attribute) == (3, "b")


def test_csv_string_cells_keep_their_text():
    r = read_csv(io.StringIO('s:string\n""\n NA \n"a,b"\n'))
    assert {row["s"] for row in r.to_rows()} == {"", " NA ", "a,b"}


def test_csv_duplicate_rows_collapse_and_are_counted():
    report = ReadReport()
    r = read_csv(io.StringIO("a\n1\n1\n1\n2\n"), report=report)
    assert len(r) == 2 and report.duplicates == 2 and report.rows == 4


# --------------------------------------------------------------------------- sira.evaluate
def test_evaluate_accepts_dataframes_and_arrow_tables_as_relvars():
    df = pd.DataFrame({"name": ["Ann", "Bob"], "age": [31, 42]})
    table = pa.table({"name": ["Ann"], "dept": ["Sales"]})
    r = sira.evaluate("project(join(P, D), (name, dept))", {"P": df, "D": table})
    assert r.to_rows() == [{"dept": "Sales", "name": "Ann"}]
    assert sira.parse("restrict(P, gt(age, 35))", {"P": df}).heading.names == ("age", "name")


# --------------------------------------------------------------------------- extras
def test_readers_without_pyarrow_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    r = Relation.from_rows({"a": INT}, [(1,)])
    with pytest.raises(MissingExtra, match=r"pip install 'sira\[arrow\]'") as caught:
        to_arrow(r)
    assert caught.value.extra == "arrow"


def test_import_sira_works_without_pandas_and_pyarrow():
    script = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pandas', 'pyarrow'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import io, sira\n"
        "r = sira.read_csv(io.StringIO('a\\n1\\n'))\n"
        "try:\n"
        "    r.to_pandas()\n"
        "except sira.errors.MissingExtra as err:\n"
        "    print(err)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert "pip install 'sira[pandas]'" in result.stdout


@settings(max_examples=40, deadline=None)
@given(ANY_RELATION)
def test_arrow_rows_come_in_canonical_order(r):
    table = to_arrow(r)
    assert [next(iter(from_arrow(table.slice(i, 1)).body)) for i in range(table.num_rows)] \
        == (r.sorted_body() if r.heading.degree else [])


def test_pandas_datetimes_declared_date_must_be_midnights():
    df = pd.DataFrame({"d": pd.to_datetime(["2020-01-01", "2020-01-02"])})
    assert from_pandas(df, types={"d": DATE}).to_rows() == [
        {"d": datetime.date(2020, 1, 1)}, {"d": datetime.date(2020, 1, 2)}]
    df = pd.DataFrame({"d": pd.to_datetime(["2020-01-01 00:00", "2020-01-02 05:00"])})
    with pytest.raises(DataFormatError, match="time of day"):
        from_pandas(df, types={"d": DATE})
