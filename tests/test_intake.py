"""One intake on every engine (issue 22, points 2 and 3): file relvars give sira's readers'
relation or error, options and relvar kinds are checked the same way everywhere."""

from __future__ import annotations

import datetime

import pandas as pd
import pytest

import sira
from sira import DATE, INT, LONG, STRING, Relation
from sira.errors import DataFormatError, NullValue, SiraTypeError, SiraValueError

GOOD_CSV = "name:string,n:int,day:date\nann,1,2020-01-02\nbob,2,2021-03-04\nann,1,2020-01-02\n"
INFERRED_CSV = "k,v,code\n1,x,007\n2,y,010\n"
RAGGED_CSV = "a,b\n1,2\n3\n4,x\n"
MISTYPED_CSV = "a:int,b:string\n1,x\nzwei,y\n"
NULL_CSV = "a:int,b:string\n1,x\n,y\nNA,z\n"


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("good", GOOD_CSV), ("inferred", INFERRED_CSV), ("ragged", RAGGED_CSV),
                       ("mistyped", MISTYPED_CSV), ("nulls", NULL_CSV)):
        path = tmp_path / f"{name}.csv"
        path.write_text(text)
        out[name] = path
    return out


def test_a_csv_relvar_is_read_as_sira_read_csv_reads_it(engine, files):
    for name in ("good", "inferred"):
        expected = sira.read_csv(files[name])
        assert sira.evaluate("r", {"r": f"csv:{files[name]}"}, engine=engine) == expected
    inferred = sira.evaluate("r", {"r": f"csv:{files['inferred']}"}, engine=engine)
    assert inferred.heading == sira.Heading.of({"k": INT, "v": STRING, "code": STRING})


@pytest.mark.parametrize("name, error", [("ragged", DataFormatError),
                                         ("mistyped", DataFormatError), ("nulls", NullValue)])
def test_a_bad_csv_relvar_is_refused_as_sira_read_csv_refuses_it(engine, files, name, error):
    with pytest.raises(error) as expected:
        sira.read_csv(files[name], name="r")
    with pytest.raises(error) as got:
        sira.evaluate("r", {"r": f"csv:{files[name]}"}, engine=engine)
    assert str(got.value) == str(expected.value)


def test_nulls_drop_leaves_out_the_rows_holding_one_on_every_engine(engine, files):
    expected = sira.read_csv(files["nulls"], nulls="drop")
    got = sira.evaluate("r", {"r": f"csv:{files['nulls']}"}, engine=engine, nulls="drop")
    assert got == expected and len(got) == 1
    frame = pd.DataFrame({"a": [1.0, None, 3.0]})
    got = sira.evaluate("r", {"r": frame}, engine=engine, nulls="drop")
    assert sorted(got.to_rows(), key=lambda t: t["a"]) == [{"a": 1.0}, {"a": 3.0}]
    with pytest.raises(NullValue):
        sira.evaluate("r", {"r": frame}, engine=engine)


def test_a_parquet_relvar_is_read_as_sira_read_parquet_reads_it(engine, tmp_path):
    r = Relation.from_rows({"name": STRING, "n": LONG, "day": DATE},
                           [("ann", 1, datetime.date(2020, 1, 2)), ("bob", 2, None or
                                                                    datetime.date(2021, 3, 4))])
    path = tmp_path / "r.parquet"
    r.write_parquet(path)
    assert sira.evaluate("r", {"r": f"parquet:{path}"}, engine=engine) == \
        sira.read_parquet(path) == r
    holes = tmp_path / "holes.parquet"
    pd.DataFrame({"a": [1, None], "b": ["x", "y"]}).to_parquet(holes)
    with pytest.raises(NullValue):
        sira.read_parquet(holes)
    with pytest.raises(NullValue):
        sira.evaluate("r", {"r": f"parquet:{holes}"}, engine=engine)


def test_a_parquet_directory_of_files_with_different_columns_is_refused(engine, tmp_path):
    # DuckDB read a directory's files with the first one's columns (a DOUBLE 2.5 became the
    # BIGINT 2); DuckDB, Spark and the Python engine left a later file's extra column out
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    for name, second in (("types", pa.table({"a": [2.5, 3.0]})),
                         ("columns", pa.table({"a": [2], "b": [5]}))):
        folder = tmp_path / name
        folder.mkdir()
        pq.write_table(pa.table({"a": [1, 2]}), folder / "p1.parquet")
        pq.write_table(second, folder / "p2.parquet")
        with pytest.raises(DataFormatError, match="must have the same columns"):
            sira.evaluate("r", {"r": f"parquet:{folder}"}, engine=engine)
    same = tmp_path / "same"
    same.mkdir()
    for i in (1, 2):
        pq.write_table(pa.table({"a": [i, 3]}), same / f"p{i}.parquet")
    assert sira.evaluate("r", {"r": f"parquet:{same}"}, engine=engine).to_rows() == \
        [{"a": 1}, {"a": 2}, {"a": 3}]


def test_a_hive_partitioned_dataset_is_one_relation_on_every_engine(engine, tmp_path):
    # pyarrow made k=20 an int32 but k=3000000000 a string and d a string, DuckDB every
    # integer a BIGINT, Spark an INT or a LONG and "01" the integer 1: three headings. Every
    # engine now types partition values by the CSV reader's rule
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    for k, code, day in ((20, "01", "2024-01-02"), (3000000000, "2", "2024-01-03"),
                         (7, "__HIVE_DEFAULT_PARTITION__", "2024-01-04")):
        folder = tmp_path / f"k={k}" / f"code={code}" / f"day={day}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"a": [1]}), folder / "part-0.parquet")
    expected = Relation.from_rows(
        {"a": LONG, "k": LONG, "code": STRING, "day": DATE},
        [(1, 20, "01", datetime.date(2024, 1, 2)), (1, 3000000000, "2", datetime.date(2024, 1, 3))])
    got = sira.evaluate("r", {"r": f"parquet:{tmp_path}"}, engine=engine, nulls="drop")
    assert got == expected
    # a glob finds the partition directories below the directory before its first pattern
    # (Spark left them out; the Python engine found no such file)
    assert sira.evaluate("r", {"r": f"parquet:{tmp_path}/*/*/*/*.parquet"}, engine=engine,
                         nulls="drop") == expected
    with pytest.raises(NullValue, match="'code'"):  # the NULL partition value
        sira.evaluate("r", {"r": f"parquet:{tmp_path}"}, engine=engine)


@pytest.mark.parametrize("option", ["max_tupels", "bogus", "null"])
def test_an_unknown_option_is_refused_naming_the_closest(engine, option):
    r = Relation.from_rows({"a": INT}, [(1,)])
    with pytest.raises(SiraValueError) as info:
        sira.evaluate("r", {"r": r}, engine=engine, **{option: 3})
    assert repr(option) in str(info.value)
    if option != "bogus":
        assert "did you mean" in str(info.value)


def test_a_bad_null_policy_is_refused(engine):
    r = Relation.from_rows({"a": INT}, [(1,)])
    with pytest.raises(SiraValueError):
        sira.evaluate("r", {"r": r}, engine=engine, nulls="ignore")


def test_a_rewrite_option_that_is_not_a_boolean_is_refused(engine):
    # rewrite="no" was taken as true
    r = Relation.from_rows({"a": INT}, [(1,)])
    with pytest.raises(SiraTypeError, match="rewrite must be True or False .got 'no'"):
        sira.evaluate("r", {"r": r}, engine=engine, rewrite="no")


def test_a_limit_beyond_any_relation_is_no_limit(engine):
    # max_tuples=10**30 made DuckDB's count overflow (IntOverflow on a four-tuple join)
    r = Relation.from_rows({"a": INT}, [(1,), (2,)])
    for query in ("join(r, rename(r, (a, b)))",
                  "unpack(extend(r, (iv(intinterval(from(1)to(a))))), (iv))"):
        assert sira.evaluate(query, {"r": r}, engine=engine, max_tuples=10**30) == \
            sira.evaluate(query, {"r": r})


@pytest.mark.parametrize("value, hint", [("data.csv", "csv:data.csv"), ({"a": 1}, "dict"),
                                         ([(1,)], "list"), (42, "int")])
def test_a_value_that_is_not_a_relation_is_refused_naming_the_relvar(engine, value, hint):
    with pytest.raises(SiraTypeError) as info:
        sira.evaluate("r", {"r": value}, engine=engine)
    message = str(info.value)
    assert "relvar 'r'" in message and hint in message and len(message) < 600


def test_a_table_name_is_refused_on_the_python_engine():
    with pytest.raises(SiraTypeError) as info:
        sira.evaluate("r", {"r": "table:t"})
    assert "table" in str(info.value)


def test_pandas_and_arrow_relvars_are_accepted_on_every_engine(engine):
    import pyarrow as pa
    frame = pd.DataFrame({"k": [1, 2, 2], "v": ["x", "y", "y"]})
    expected = sira.from_pandas(frame)
    assert sira.evaluate("r", {"r": frame}, engine=engine) == expected
    assert sira.evaluate("r", {"r": pa.Table.from_pandas(frame)}, engine=engine) == expected


def test_a_big_frame_never_appears_in_a_message(engine):
    frame = pd.DataFrame({"k": list(range(5000)), "v": [None] * 5000})
    with pytest.raises(sira.SiraError) as info:
        sira.evaluate("r", {"r": frame}, engine=engine)
    assert len(str(info.value)) < 600


# ------------------------------------------------------------------------------ NULLs, found
def _holes():
    import pyarrow as pa
    return pa.table({"a": pa.array([1, None, 3], pa.int64()),
                     "f": pa.array([1.0, 2.0, float("nan")]),
                     "iv": pa.array([{"begin": 1, "end": None}, {"begin": None, "end": 3},
                                     {"begin": 0, "end": 2}],
                                    pa.struct([("begin", pa.int64()), ("end", pa.int64())]))})


@pytest.mark.parametrize("column, kind", [("a", "NULL"), ("f", "NaN"), ("iv", "NULL")])
def test_nulls_are_refused_from_arrow_with_and_without_null_counts(engine, column, kind):
    import pyarrow as pa
    table = _holes().select([column])
    if column == "a":  # the same holes, in an array built without a validity bitmap count
        table = pa.table({"a": pa.array([1, None, 3], pa.int64()).cast(pa.int64())})
    with pytest.raises(NullValue) as info:
        sira.evaluate("r", {"r": table}, engine=engine)
    assert (info.value.attribute, info.value.value) == (column, kind)


@pytest.mark.parametrize("statistics", [True, False])
def test_nulls_are_refused_from_parquet_with_and_without_statistics(engine, tmp_path,
                                                                    statistics):
    import pyarrow.parquet as pq
    path = tmp_path / "holes.parquet"
    pq.write_table(_holes(), path, write_statistics=statistics)
    with pytest.raises(NullValue):
        sira.evaluate("project(r, (a))", {"r": f"parquet:{path}"}, engine=engine)
    clean = tmp_path / "clean.parquet"
    pq.write_table(_holes().select(["a"]).filter(pa_not_null("a")), clean,
                   write_statistics=statistics)
    assert len(sira.evaluate("r", {"r": f"parquet:{clean}"}, engine=engine)) == 2


def pa_not_null(name):
    import pyarrow.compute as pc
    return pc.is_valid(pc.field(name))


def test_nulls_are_refused_from_pandas_of_every_dtype(engine):
    frame = pd.DataFrame({"i": [1, 2, 3], "s": ["x", None, "z"]})
    with pytest.raises(NullValue) as info:
        sira.evaluate("r", {"r": frame}, engine=engine)
    assert info.value.attribute == "s"
    assert len(sira.evaluate("r", {"r": frame[["i"]]}, engine=engine)) == 3


@pytest.mark.skipif("duckdb" not in __import__("conftest").ENGINES, reason="needs DuckDB")
def test_nulls_are_refused_from_duckdb_tables_nullable_or_not():
    from sira_duckdb import DuckDBEngine
    engine = DuckDBEngine()
    con = engine.connection
    con.execute("CREATE TABLE strict (a INTEGER NOT NULL, b INTEGER)")
    con.execute("INSERT INTO strict VALUES (1, 2), (2, NULL)")
    with pytest.raises(NullValue) as info:
        engine.evaluate("r", {"r": "table:strict"})
    assert info.value.attribute == "b"
    con.execute("CREATE TABLE declared (a INTEGER NOT NULL)")
    con.execute("INSERT INTO declared VALUES (1), (2)")
    assert len(engine.evaluate("r", {"r": "table:declared"})) == 2


@pytest.mark.skipif("spark" not in __import__("conftest").ENGINES, reason="needs Spark")
@pytest.mark.parametrize("nullable", [True, False])
def test_nulls_are_refused_from_spark_nullable_and_non_nullable_schemas(nullable):
    from pyspark.sql import types as T
    from sira_spark import default_engine
    engine = default_engine()
    schema = T.StructType([T.StructField("a", T.IntegerType(), nullable)])
    rows = [(1,), (None,)] if nullable else [(1,), (2,)]
    df = engine.spark.createDataFrame(rows, schema)
    if nullable:
        with pytest.raises(NullValue):
            engine.evaluate("r", {"r": df})
    else:
        assert len(engine.evaluate("r", {"r": df})) == 2
