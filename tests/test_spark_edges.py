"""The Spark engine at its edges: data from outside sira (NULLs, NaN, empty intervals, Spark
types users meet), sources that cannot be read, a stopped session, a machine without pyspark or
Java, and failing queries naming the failing tuple as the Python engine does (that they print
nothing else is checked in a fresh process by tests/test_spark_engine.py).

The session-stopping test is the last of this module: it stops the shared session, and
``default_engine()`` starts a new one for whoever comes next."""

from __future__ import annotations

import datetime
import importlib.util
import shutil

import pytest

import sira
from sira import FLOAT, INT, INTINTERVAL, STRING, TIMESTAMP, Interval, Relation
from sira.errors import (DataFormatError, DataSourceError, DivisionByZero, EngineUnavailable,
                         FloatOverflow, IntOverflow, NullValue, SiraValueError)

from conftest import spark_available

needs_spark = pytest.mark.skipif(not spark_available(), reason="Spark is not available here")


@pytest.fixture(scope="module")
def spark():
    from sira_spark import default_engine
    return default_engine().spark


def spark_eval(text, relvars, **options):
    return sira.evaluate(text, relvars, engine="spark", **options)


def people(spark):
    """Four people, two of whom have no recorded dept (NULL)."""
    return spark.createDataFrame([(1, "Sales"), (2, None), (3, "IT"), (4, None)],
                                 "id int, dept string")


KNOWN_PEOPLE = Relation.from_rows({"id": INT, "dept": STRING}, [(1, "Sales"), (3, "IT")])


# --------------------------------------------------------------------------- NULL and NaN

@needs_spark
def test_a_dataframe_holding_nulls_is_refused_naming_relvar_attribute_and_rows(spark):
    with pytest.raises(NullValue) as err:
        spark_eval("restrict(emp, eq(dept, 'Sales'))", {"emp": people(spark)})
    e = err.value
    assert (e.relvar, e.attribute, e.count, e.value) == ("emp", "dept", 2, "NULL")
    assert "emp" in str(e) and "dept" in str(e) and "2 rows" in str(e)


@needs_spark
def test_restrict_and_its_negation_partition_a_relvar_that_had_nulls(spark):
    # today's wrong answer: the NULL rows fell out of both halves of the union
    text = "union(restrict(emp, eq(dept, 'Sales')), restrict(emp, not(eq(dept, 'Sales'))))"
    with pytest.raises(NullValue):
        spark_eval(text, {"emp": people(spark)})
    assert spark_eval(text, {"emp": people(spark)}, nulls="drop") == KNOWN_PEOPLE
    assert spark_eval("emp", {"emp": people(spark)}, nulls="drop") == KNOWN_PEOPLE


@needs_spark
def test_nan_never_passes_a_comparison_because_it_is_refused(spark):
    df = spark.createDataFrame([(1, float("nan")), (2, 1.5), (3, -1.0)], "k int, f double")
    with pytest.raises(NullValue) as err:
        spark_eval("restrict(r, gt(f, 0.0))", {"r": df})
    assert (err.value.attribute, err.value.count, err.value.value) == ("f", 1, "NaN")
    kept = spark_eval("restrict(r, gt(f, 0.0))", {"r": df}, nulls="drop")
    assert kept == Relation.from_rows({"k": INT, "f": FLOAT}, [(2, 1.5)])


@needs_spark
def test_a_sum_over_a_column_with_nulls_is_refused_not_summed_as_if_absent(spark):
    df = spark.createDataFrame([("a", 1), ("a", None), ("b", 5)], "k string, n int")
    text = "summarizeby(r, (k), (total(plus(n))))"
    with pytest.raises(NullValue) as err:
        spark_eval(text, {"r": df})
    assert (err.value.attribute, err.value.count) == ("n", 1)
    assert spark_eval(text, {"r": df}, nulls="drop") == \
        Relation.from_rows({"k": STRING, "total": INT}, [("a", 1), ("b", 5)])


@needs_spark
def test_nulls_nested_in_structs_and_relation_valued_attributes_are_found(spark):
    tuples = spark.sql("select 1 as k, named_struct('x', cast(null as int), 'y', 2) as t "
                       "union all select 2, named_struct('x', 1, 'y', 2)")
    with pytest.raises(NullValue) as err:
        spark_eval("r", {"r": tuples})
    assert (err.value.attribute, err.value.count, err.value.value) == ("t", 1, "NULL")
    rvas = spark.sql("select 1 as k, array(named_struct('x', 2.0D), named_struct('x', "
                     "double('NaN'))) as w union all select 2, array(named_struct('x', 1.0D))")
    with pytest.raises(NullValue) as err:
        spark_eval("r", {"r": rvas})
    assert (err.value.attribute, err.value.value) == ("w", "NaN")
    kept = spark_eval("ungroup(r, w)", {"r": rvas}, nulls="drop")
    assert kept == Relation.from_rows({"k": INT, "x": FLOAT}, [(2, 1.0)])


@needs_spark
def test_an_interval_with_a_null_end_is_unbounded_not_null(spark):
    df = spark.sql("select 1 as k, named_struct('begin', 3, 'end', cast(null as int)) as d")
    assert spark_eval("r", {"r": df}) == \
        Relation.from_rows({"k": INT, "d": INTINTERVAL}, [(1, Interval(3, None))])
    null_begin = spark.sql("select 1 as k, named_struct('begin', cast(null as int), 'end', 4) "
                           "as d")
    with pytest.raises(NullValue):
        spark_eval("r", {"r": null_begin})


@needs_spark
def test_an_interval_whose_end_is_before_its_begin_is_refused(spark):
    df = spark.sql("select 1 as k, named_struct('begin', 5, 'end', 3) as d "
                   "union all select 2, named_struct('begin', 1, 'end', 2)")
    for policy in ("error", "drop"):
        with pytest.raises(DataFormatError) as err:  # the readers' class
            spark_eval("r", {"r": df}, nulls=policy)
        assert "'r'" in str(err.value) and "'d'" in str(err.value)


@needs_spark
def test_a_float_minus_zero_from_a_dataframe_is_zero_at_any_depth(spark):
    """A Spark DataFrame (or a Parquet file Spark reads) holding -0.0 in a FLOAT: sira's
    FLOAT has one zero, as the Python engine's readers read it; Spark kept -0.0, shown and
    written as such, and an RVA holding both zeros kept two elements."""
    df = spark.sql("select 1 as k, cast('-0.0' as double) as f, "
                   "named_struct('a', cast('-0.0' as double)) as t, "
                   "array(named_struct('a', cast('-0.0' as double)), named_struct('a', 0.0D)) "
                   "as r")
    (row,) = spark_eval("extend(r, (g(plus(f, 1.0))))", {"r": df}).to_rows()
    assert repr(row["f"]) == "0.0" and repr(row["t"]["a"]) == "0.0"
    assert [repr(e["a"]) for e in row["r"].to_rows()] == ["0.0"]


@needs_spark
def test_an_interval_whose_end_equals_its_begin_is_the_empty_interval(spark):
    # the one sira value IINTERSECT makes that way, as the Python readers accept it
    df = spark.sql("select 1 as k, named_struct('begin', 4, 'end', 4) as d")
    (row,) = spark_eval("r", {"r": df}).to_rows()
    assert row["d"].empty


@needs_spark
def test_parquet_and_table_relvars_with_nulls_are_refused_too(spark, tmp_path):
    path = str(tmp_path / "people.parquet")
    people(spark).write.parquet(path)
    people(spark).createOrReplaceTempView("people_with_nulls")
    for source in (f"parquet:{path}", "table:people_with_nulls"):
        with pytest.raises(NullValue) as err:
            spark_eval("emp", {"emp": source})
        assert (err.value.relvar, err.value.count) == ("emp", 2)
        assert spark_eval("emp", {"emp": source}, nulls="drop") == KNOWN_PEOPLE


@needs_spark
def test_the_engine_policy_applies_unless_the_call_names_another(spark):
    from sira_spark import SparkEngine
    dropping = SparkEngine(spark, nulls="drop")
    assert dropping.evaluate("emp", {"emp": people(spark)}) == KNOWN_PEOPLE
    with pytest.raises(NullValue):
        dropping.evaluate("emp", {"emp": people(spark)}, nulls="error")


@needs_spark
def test_an_engine_trusting_its_data_runs_no_null_check(spark):
    from sira_spark import SparkEngine
    from test_spark_engine import JobCounter
    trusting = SparkEngine(spark, trust_no_nulls=True)
    clean = spark.createDataFrame([(1, "Sales"), (3, "IT")], "id int, dept string")
    with JobCounter(spark) as jobs:
        trusting.dataframe("emp", {"emp": clean})
    assert jobs.jobs == []
    with pytest.raises(NullValue):  # a policy named by the call still applies
        trusting.evaluate("emp", {"emp": people(spark)}, nulls="error")


@needs_spark
def test_an_unknown_null_policy_is_refused_before_anything_runs(spark):
    from sira_spark import SparkEngine
    with pytest.raises(SiraValueError) as err:
        spark_eval("emp", {"emp": KNOWN_PEOPLE}, nulls="keep")
    assert err.value.value == "keep"
    with pytest.raises(SiraValueError):
        SparkEngine(spark, nulls="ignore")


# --------------------------------------------------------------------------- Spark types

@needs_spark
def test_a_timestamp_instant_becomes_its_utc_date_and_time(spark):
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    df = spark.createDataFrame([(datetime.datetime(2024, 1, 1, 10, 0, tzinfo=plus_two),)],
                               "t timestamp")
    assert spark_eval("r", {"r": df}) == \
        Relation.from_rows({"t": TIMESTAMP}, [(datetime.datetime(2024, 1, 1, 8, 0),)])


@needs_spark
def test_the_utc_rule_holds_whatever_the_session_time_zone(spark):
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        # 01:30 on the night clocks go back happens twice in New York: this is the second
        df = spark.sql("select timestamp'2024-11-03 06:30:00 UTC' as t")
        result = spark_eval("r", {"r": df})
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
    assert result.to_rows() == [{"t": datetime.datetime(2024, 11, 3, 6, 30)}]


@needs_spark
def test_spark_types_users_meet_are_mapped(spark):
    df = spark.sql("select cast(12345678901234567890 as decimal(20,0)) as b, "
                   "cast(2.5 as float) as f, cast(3 as smallint) as s, cast(4 as tinyint) as t")
    result = spark_eval("extend(r, (b2(plus(b, bigint(1))), f2(plus(f, 1.0))))", {"r": df})
    assert result.to_rows() == [{"b": 12345678901234567890, "b2": 12345678901234567891,
                                 "f": 2.5, "f2": 3.5, "s": 3, "t": 4}]
    assert str(result.heading) == "{b: BIGINT, b2: BIGINT, f: FLOAT, f2: FLOAT, s: INT, t: INT}"


@needs_spark
@pytest.mark.parametrize("select,hint", [
    ("cast(1.25 as decimal(10,2))", "cast('double')"),
    ("array(1, 2, 2)", "F.explode"),
    ("map('a', 1)", "F.explode"),
    ("named_struct('x', cast(1.5 as decimal(4,2)))", "decimal(38,0)"),
])
def test_a_spark_type_sira_lacks_is_refused_saying_how_to_convert(spark, select, hint):
    """DataFormatError, the class the Python engine gives for the same DataFrame (it raised
    SiraTypeError on Spark)."""
    df = spark.sql(f"select {select} as c")
    with pytest.raises(DataFormatError) as err:
        spark_eval("r", {"r": df})
    assert hint in str(err.value) and "relvar 'r'" in str(err.value)
    with pytest.raises(DataFormatError):
        sira.evaluate("r", {"r": df})


@needs_spark
def test_struct_fields_in_any_order_and_case_land_in_the_right_attributes(spark):
    df = spark.sql("select named_struct('Y', 'b', 'x', 1) as T")
    (row,) = spark_eval("r", {"r": df}).to_rows()
    assert (row["t"]["x"], row["t"]["y"]) == (1, "b")


@needs_spark
def test_relation_valued_columns_from_outside_are_put_in_canonical_form(spark):
    # the same relation {1, 2}, written unsorted and with a duplicate on one side
    r = spark.sql("select 1 as a, array(named_struct('x', 2), named_struct('x', 1), "
                  "named_struct('x', 1)) as w")
    s = spark.sql("select 2 as b, array(named_struct('x', 1), named_struct('x', 2)) as w")
    assert spark_eval("eq(r, s)", {"r": r.select("w"), "s": s.select("w")}) is True
    joined = spark_eval("join(r, s)", {"r": r, "s": s})
    assert [(t["a"], t["b"], len(t["w"])) for t in joined.to_rows()] == [(1, 2, 2)]


# --------------------------------------------------------------------------- sources

@needs_spark
@pytest.mark.parametrize("source", ["parquet:/nonexistent/sira/people.parquet",
                                    "table:no_such_table_anywhere"])
def test_a_missing_parquet_path_or_table_is_a_data_source_error(spark, source):
    with pytest.raises(DataSourceError) as err:
        spark_eval("project(emp, (id))", {"emp": source})
    assert (err.value.relvar, err.value.source) == ("emp", source)


@needs_spark
def test_a_file_that_is_not_parquet_is_a_data_source_error(spark, tmp_path):
    (tmp_path / "part-0.parquet").write_bytes(b"this is not a parquet file" * 8)
    with pytest.raises(DataSourceError) as err:
        spark_eval("emp", {"emp": f"parquet:{tmp_path}"})
    assert err.value.relvar == "emp" and "parquet" in err.value.reason.lower()


@needs_spark
def test_parquet_files_deleted_after_they_were_opened_are_a_data_source_error(spark, tmp_path):
    path = tmp_path / "people.parquet"
    people(spark).write.parquet(str(path))
    df = spark.read.parquet(str(path))
    shutil.rmtree(path)
    with pytest.raises(DataSourceError) as err:
        spark_eval("emp", {"emp": df})
    assert err.value.relvar == "emp"


# --------------------------------------------------------------------------- failing queries

NUMBERS = Relation.from_rows({"a": INT}, [(2147483647,), (1,), (5,)])


@needs_spark
@pytest.mark.parametrize("text,cls", [
    ("extend(r, (b(plus(a, 1))))", IntOverflow),
    ("restrict(r, gt(div(10, minus(a, 1)), 0))", DivisionByZero),
    ("transform(r, (b(mult(tofloat(a), 1e300))))", FloatOverflow),
])
def test_a_failing_tuple_is_named_on_spark_as_on_python(spark, text, cls):
    with pytest.raises(cls) as py:
        sira.evaluate(text, {"r": NUMBERS})
    with pytest.raises(cls) as on_spark:
        spark_eval(text, {"r": NUMBERS})
    assert on_spark.value.field_values() == py.value.field_values()
    assert on_spark.value.tuple is not None


# --------------------------------------------------------------------------- no Spark here

def _fresh_default(monkeypatch):
    import sira_spark.session as session
    monkeypatch.setattr(session, "_DEFAULT", None)
    return session


def test_engine_spark_without_pyspark_says_what_to_install(monkeypatch):
    session = _fresh_default(monkeypatch)
    real = importlib.util.find_spec
    monkeypatch.setattr(session.importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyspark" else real(name, *a))
    with pytest.raises(EngineUnavailable) as err:
        sira.evaluate("r", {"r": KNOWN_PEOPLE}, engine="spark")
    assert "pyspark" in str(err.value) and "sira[spark]" in err.value.install


def test_engine_spark_without_java_says_what_to_install(monkeypatch):
    session = _fresh_default(monkeypatch)
    real = importlib.util.find_spec
    monkeypatch.setattr(session.importlib.util, "find_spec",
                        lambda name, *a: object() if name == "pyspark" else real(name, *a))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(session.shutil, "which", lambda name, *a: None)
    with pytest.raises(EngineUnavailable) as err:
        sira.evaluate("r", {"r": KNOWN_PEOPLE}, engine="spark")
    assert "Java" in str(err.value) and "java" in err.value.install.lower()


def test_a_java_home_without_java_is_noticed(monkeypatch, tmp_path):
    session = _fresh_default(monkeypatch)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    assert session.java_available() is False


# --------------------------------------------------------------------------- last: stop

@needs_spark
def test_an_engine_whose_session_was_stopped_says_so_and_the_default_starts_anew(spark):
    from sira_spark import default_engine
    engine = default_engine()
    spark.stop()
    with pytest.raises(EngineUnavailable) as err:
        engine.evaluate("r", {"r": KNOWN_PEOPLE})
    assert "stopped" in str(err.value)
    assert sira.evaluate("r", {"r": KNOWN_PEOPLE}, engine="spark") == KNOWN_PEOPLE
    assert default_engine() is not engine


@needs_spark
def test_range_on_a_bigint_past_long_with_a_float_c_is_refused_and_within_it_is_exact():
    """An integer E with a FLOAT C compares E' with the double E + C exactly (its ceiling, in
    decimal(38,0)); Spark's ceiling is a LONG, so a BIGINT E whose E + C is past 2**63 is
    refused with a SiraValueError naming the window, never compared as doubles."""
    from sira import BIGINT, LONG
    query = "window(s, ts, range(2.5) on(e))"
    past = Relation.from_rows({"ts": LONG, "e": BIGINT}, [(0, 10 ** 20), (1, 10 ** 20 + 3)])
    with pytest.raises(SiraValueError, match=r"range\(2.5\) on\(e\)"):
        spark_eval(query, {"s": past})
    within = Relation.from_rows({"ts": LONG, "e": BIGINT}, [
        (0, 2 ** 53 + 2), (1, 2 ** 53 + 4), (2, 2 ** 53 + 1), (3, 2 ** 53 + 5)])
    assert spark_eval(query, {"s": within}) == sira.evaluate(query, {"s": within})
