"""The Spark engine as a user meets it: relvars given as Relations, DataFrames, tables or Parquet
files; uncollected DataFrame plans and Spark's explain; failures reported as sira errors naming
the node; degree-0 relations; relation-valued attributes as join attributes."""

from __future__ import annotations

import itertools
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

import sira
from sira import (INT, INTINTERVAL, LONGINTERVAL, STRING, TABLE_DEE, TABLE_DUM, Interval,
                  Relation, RelationType, attr, lit)
from sira.errors import (DivisionByZero, HeadingMismatch, IntervalError, IntOverflow,
                         NullValue, SiraTypeError, TooManyTuples, UnknownRelvar)

from conftest import spark_available

pytestmark = pytest.mark.skipif(not spark_available(), reason="Spark is not available here")


L = sira.literal

FILES = Relation.from_rows({"filename": STRING, "pagesize": INT},
                           [("DATABASECATALOG.SPDB", 32768), ("BW_SPOTS.SPDB", 16384),
                            ("BW_TEMP.SPDB", 16384)])
QUERY = "project(restrict(files, ge(pagesize, 16384)), (pagesize))"
EXPECTED = Relation.from_rows({"pagesize": INT}, [(32768,), (16384,)])
SIZES = Relation.from_rows({"pagesize": INT, "label": STRING},
                           [{"pagesize": 16384, "label": "small"},
                            {"pagesize": 32768, "label": "big"},
                            {"pagesize": 8192, "label": "tiny"}])


@pytest.fixture(scope="module")
def engine():
    from sira_spark import default_engine
    return default_engine()


@pytest.fixture(scope="module")
def spark(engine):
    return engine.spark


def files_dataframe(spark, duplicates=True):
    """FILES as a DataFrame with duplicate rows, upper-case names and columns out of order."""
    rows = [(r["pagesize"], r["filename"]) for r in FILES.to_rows()]
    if duplicates:
        rows = rows + rows[:2] + rows[:1]
    return spark.createDataFrame(rows, "PAGESIZE int, FileName string")


class JobCounter:
    """Counts the Spark jobs started inside a ``with`` block (to prove nothing was collected)."""

    uses = itertools.count()

    def __init__(self, spark):
        self.sc = spark.sparkContext
        self.group = f"sira-test-jobs-{next(self.uses)}"

    def __enter__(self):
        self.sc.setJobGroup(self.group, "sira test")
        return self

    def __exit__(self, *exc):
        self.jobs = list(self.sc.statusTracker().getJobIdsForGroup(self.group))
        self.sc.setJobGroup("", "")
        self.group += "-done"
        return False


# --------------------------------------------------------------------------- relvar kinds

def test_relvar_given_as_a_relation(engine):
    assert sira.evaluate(QUERY, {"files": FILES}, engine="spark") == EXPECTED
    assert sira.evaluate(QUERY, {"files": FILES}) == EXPECTED


def _tree(text):
    """``text`` parsed against FILES's heading (the builder route: no relvar values needed)."""
    return sira.parse(text, {"files": FILES.heading})


def test_relvar_given_as_a_dataframe_with_duplicates_is_a_set(engine, spark):
    df = files_dataframe(spark)
    assert df.count() == 6
    relvars = {"files": df}
    assert engine.evaluate("files", relvars) == FILES
    assert sira.evaluate(_tree("files"), relvars, engine="spark") == FILES
    assert engine.dataframe("files", relvars).count() == 3
    # operators that keep every attribute must not let the duplicates through either
    for text in ("restrict(files, gt(pagesize, 0))", "extend(files, (n(length(filename))))",
                 "rename(files, (pagesize, size))"):
        assert len(engine.evaluate(text, relvars)) == 3
        assert engine.dataframe(text, relvars).count() == 3, text
    assert engine.evaluate(QUERY, relvars) == EXPECTED
    assert sira.evaluate(_tree(QUERY), relvars, engine="spark") == EXPECTED


def _has_distinct(df) -> bool:
    """Whether a plan aggregates (a distinct() is a HashAggregate with no functions)."""
    return "HashAggregate" in df._jdf.queryExecution().executedPlan().toString()


def test_unique_relvars_skip_distinct(engine, spark, tmp_path):
    from sira_spark import SparkEngine, unique
    df = files_dataframe(spark, duplicates=False)
    assert _has_distinct(engine.dataframe("files", {"files": df}))
    assert not _has_distinct(engine.dataframe("files", {"files": unique(df)}))
    trusting = SparkEngine(spark=spark, trust_unique=True)
    assert trusting.trust_unique and not engine.trust_unique
    assert not _has_distinct(trusting.dataframe("files", {"files": df}))
    # results are the same relations; unique() works for table and parquet names too
    path = str(tmp_path / "files.parquet")
    df.write.parquet(path)
    for value in (unique(df), unique(f"parquet:{path}"), unique(FILES)):
        assert engine.heading_of(value) == FILES.heading
        assert engine.evaluate(QUERY, {"files": value}) == EXPECTED
        assert sira.evaluate(QUERY, {"files": value}, engine="spark") == EXPECTED
    assert trusting.evaluate(QUERY, {"files": df}) == EXPECTED
    assert trusting.evaluate("join(files, sizes)", {"files": df, "sizes": SIZES}) == \
        sira.evaluate("join(files, sizes)", {"files": FILES, "sizes": SIZES})
    # operators that cannot create duplicates add no distinct of their own
    for text in ("restrict(files, gt(pagesize, 0))", "extend(files, (n(length(filename))))",
                 "rename(files, (pagesize, size))", "join(files, files)",
                 "semijoin(files, files)"):
        assert not _has_distinct(trusting.dataframe(text, {"files": df})), text
    # a projection that drops an attribute can, so it keeps its distinct
    assert _has_distinct(trusting.dataframe(QUERY, {"files": df}))


def test_the_wrong_heading_for_a_unique_relvar_is_still_a_type_error(engine, spark):
    from sira_spark import unique
    df = spark.createDataFrame([(1,)], "x int")
    with pytest.raises(SiraTypeError):
        engine.evaluate(_tree("files"), {"files": unique(df)})


def test_relvar_given_as_a_table_name(engine, spark):
    files_dataframe(spark).createOrReplaceTempView("sira_test_files")
    relvars = {"files": "table:sira_test_files"}
    assert engine.heading_of("table:sira_test_files") == FILES.heading
    assert engine.evaluate(QUERY, relvars) == EXPECTED
    assert engine.evaluate("files", relvars) == FILES
    assert sira.evaluate(_tree(QUERY), relvars, engine="spark") == EXPECTED


def test_relvar_given_as_a_parquet_path(engine, spark, tmp_path):
    path = str(tmp_path / "files.parquet")
    files_dataframe(spark).write.parquet(path)
    relvars = {"files": f"parquet:{path}"}
    assert engine.heading_of(f"parquet:{path}") == FILES.heading
    assert engine.evaluate(QUERY, relvars) == EXPECTED
    assert engine.evaluate("files", relvars) == FILES
    assert sira.evaluate(_tree(QUERY), relvars, engine="spark") == EXPECTED


@pytest.mark.parametrize("kind", ["dataframe", "table", "parquet"])
def test_sira_evaluate_text_with_spark_only_relvars(engine, spark, tmp_path, kind):
    df = files_dataframe(spark)
    if kind == "dataframe":
        value = df
    elif kind == "table":
        df.createOrReplaceTempView("sira_test_files3")
        value = "table:sira_test_files3"
    else:
        path = str(tmp_path / "files.parquet")
        df.write.parquet(path)
        value = f"parquet:{path}"
    assert sira.evaluate(QUERY, {"files": value}, engine="spark") == EXPECTED


def test_relvars_of_every_kind_join_together(engine, spark, tmp_path):
    sizes = SIZES
    path = str(tmp_path / "sizes.parquet")
    engine.load(sizes).write.parquet(path)
    files_dataframe(spark).createOrReplaceTempView("sira_test_files2")
    text = "project(join(files, sizes), (filename, label))"
    expected = sira.evaluate(text, {"files": FILES, "sizes": sizes})
    assert len(expected) == 3
    assert engine.evaluate(text, {"files": "table:sira_test_files2",
                                  "sizes": f"parquet:{path}"}) == expected
    assert engine.evaluate(text, {"files": files_dataframe(spark), "sizes": sizes}) == expected


def test_a_relvar_of_an_unknown_kind_is_a_sira_error(engine):
    with pytest.raises(sira.SiraError):
        engine.load(42)
    with pytest.raises(sira.SiraError):
        engine.load("csv:/nowhere")


# --------------------------------------------------------------------------- plans

def test_a_promise_given_as_anything_but_a_boolean_is_refused(spark):
    # trust_unique="no" was true: every DataFrame relvar taken as free of duplicates
    from sira_spark import SparkEngine
    for flag in ("trust_unique", "trust_no_nulls"):
        with pytest.raises(sira.SiraTypeError, match=f"{flag} must be True or False"):
            SparkEngine(spark, **{flag: "no"})


def test_dataframe_returns_a_plan_without_collecting(engine, spark):
    from pyspark.sql import DataFrame
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType
    schema = StructType([StructField("PAGESIZE", IntegerType(), False),
                         StructField("FileName", StringType(), False)])
    relvars = {"files": spark.createDataFrame(files_dataframe(spark).rdd, schema)}
    with JobCounter(spark) as jobs:
        df = engine.dataframe(QUERY, relvars)
    assert isinstance(df, DataFrame)
    assert jobs.jobs == []  # columns that cannot be null need no NULL check
    assert df.columns == ["pagesize"]
    assert df.count() == 2


def test_dataframe_of_nullable_columns_runs_only_the_null_check(engine, spark):
    from pyspark.sql import functions as F
    files = files_dataframe(spark)  # nullable columns: checked now, by one aggregation
    with JobCounter(spark) as one_aggregation:
        files.agg(F.count(F.lit(1))).first()
    with JobCounter(spark) as jobs:
        df = engine.dataframe(QUERY, {"files": files})
    assert len(jobs.jobs) == len(one_aggregation.jobs)
    assert df.count() == 2


def test_a_hop_summarized_by_panes_runs_no_job_of_the_window_table(engine, spark):
    """The SUMMARIZEBY over a HOP reads the stream by panes; the window table it replaces was
    compiled all the same, and its max_tuples count ran the whole HOP first (1.2 of 1.7 s of a
    1,000,000-element benchmark)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType
    schema = StructType([StructField("ts", LongType(), False), StructField("v", LongType(), False)])
    stream = spark.createDataFrame(spark.range(200).select(F.col("id").alias("ts"),
                                                           F.col("id").alias("v")).rdd, schema)
    text = ("summarizeby(hop(s, ts, size(60) slide(10)), (window_start, window_end), "
            "(t(plus(v))))")
    with JobCounter(spark) as jobs:
        df = engine.dataframe(text, {"s": stream})
    assert jobs.jobs == []
    assert sira.Relation.from_rows(
        {"window_start": sira.LONG, "window_end": sira.LONG, "t": sira.LONG},
        [(r.window_start, r.window_end, r.t) for r in df.collect()]) == \
        sira.evaluate(text, {"s": sira.Relation.from_rows(
            {"ts": sira.LONG, "v": sira.LONG}, [(i, i) for i in range(200)])})


def test_row_bounds_count_written_out_explodes_and_survive_a_store(spark):
    """``rowbound.bound`` reads a plan: an explode of an array written out in it (an
    interval's two ends as events) makes at most that many rows of each, one of an array of
    unknown length (``sequence``) has no bound, and a stored DataFrame keeps its input's."""
    from pyspark.sql import functions as F

    from sira_spark.rowbound import at_most, bound, stored
    ten = spark.range(10)
    ends = ten.select(F.explode(F.array(F.col("id"), F.col("id") + 1)).alias("p"))
    assert bound(ends, 1000) == 20 and at_most(ends, 20) and not at_most(ends, 19)
    twice = ends.select(F.explode(F.array(F.col("p"), F.col("p"))).alias("q"))
    assert bound(twice, 1000) == 40
    spans = ten.select(F.explode(F.sequence(F.lit(0), F.col("id"))).alias("p"))
    assert bound(spans, 10 ** 9) is None
    assert bound(stored(ends.where("p > 3")), 1000) == 20
    assert bound(stored(spans), 10 ** 9) is None
    assert bound(ten.localCheckpoint(), 10 ** 9) is None  # stored elsewhere: not known


def test_a_persisted_dataframe_is_bounded_by_the_rows_it_stored(spark, engine):
    """A persisted DataFrame (``InMemoryRelation``) is bounded by the rows it counted while
    it was stored, and has no bound before (its stored plan, printed below it, is not read as
    steps); a query over persisted DataFrames gives the Python engine's result."""
    from sira_spark.rowbound import bound, stored
    df = spark.range(30).selectExpr("id AS ts", "CAST(id % 3 AS INT) AS k",
                                    "CAST(id % 7 AS INT) AS v").persist()
    try:
        assert bound(df, 10 ** 6) is None  # not stored yet
        df.count()
        assert bound(df, 10 ** 6) == 30 and bound(df, 29) is None
        assert bound(df.join(df.where("k = 1"), "ts"), 10 ** 6) == 31 * 31 - 1
        # the cache's count chooses plans, it does not skip a max_tuples count (the guards
        # ask with cached=False), even once what was read from it is stored
        assert bound(df, 10 ** 6, cached=False) is None
        kept = stored(df.where("k = 1"))
        assert bound(kept, 10 ** 6) == 30 and bound(kept, 10 ** 6, cached=False) is None
        text = "window(s, ts, partition(k) rows(2))"
        rows = [{"ts": i, "k": i % 3, "v": i % 7} for i in range(30)]
        held = sira.Relation.from_rows({"ts": sira.LONG, "k": INT, "v": INT}, rows)
        expected = sira.evaluate(text, {"s": held})
        assert engine.evaluate(text, {"s": df}) == expected
    finally:
        df.unpersist()


def test_a_short_overlap_join_keeps_its_exact_size_for_the_sequences_after_it(engine):
    """JOINUSING on one interval attribute counts its result before it is made (the
    ``max_tuples`` guard); a short one keeps that count (``rowbound.stored``), so a PACK or
    sweep reading it needs no count and quantiles job of its own."""
    from sira_spark.rowbound import bound
    r = Relation.from_rows({"k": INT, "during": INTINTERVAL},
                           [(i % 3, Interval(i, i + 5)) for i in range(40)])
    q = Relation.from_rows({"k": INT, "v": INT, "during": INTINTERVAL},
                           [(i % 3, i, Interval(2 * i, 2 * i + 3)) for i in range(40)])
    text = "joinusing(r, q, (during))"
    df = engine.dataframe(text, {"r": r, "q": q})
    assert bound(df, 10 ** 9) == df.count() == sira.evaluate(text, {"r": r, "q": q}).cardinality


def test_driver_tables_refuse_a_value_of_another_type_rather_than_read_it_as_null(spark):
    """``convert.local_dataframe`` (the driver's small tables: what each bucket inherits,
    decided chunks) hands rows to the JVM's unpickler, which reads a value of another type
    (an int in a DOUBLE column) as NULL; each row is checked first, as createDataFrame does."""
    from sira_spark.convert import local_dataframe
    rows = local_dataframe(spark, [(1, 2.5, None)], "a int, x double, y long").collect()
    assert [tuple(r) for r in rows] == [(1, 2.5, None)]
    with pytest.raises(TypeError, match="field x"):
        local_dataframe(spark, [(1, 0)], "a int, x double")


def test_row_bounds_count_the_row_an_aggregation_without_grouping_makes_of_none(spark):
    """``rowbound.bound`` reads the plan step by step (it lets the ``max_tuples`` guards skip
    their count): an aggregation without grouping makes one row of an empty input, a join
    has at most the product of its inputs' rows + 1 (less one), a semi join its left input's,
    a union the sum; a plan holding a subquery has no bound."""
    from pyspark.sql import functions as F

    from sira_spark.rowbound import at_most, bound
    none, ten = spark.range(0), spark.range(10)
    counted = none.agg(F.count("*").alias("n"))
    assert counted.count() == 1 and bound(counted, 1000) == 1
    assert bound(ten.crossJoin(counted), 1000) == 21
    assert bound(ten.join(ten.groupBy("id").count(), "id"), 1000) == 120
    assert bound(ten.join(ten, "id", "left_semi"), 1000) == 10
    assert bound(ten.union(ten).union(counted), 1000) == 21
    both = counted.union(none.agg(F.count("*").alias("n")))  # Spark merges them: subqueries
    assert both.count() == 2 and not at_most(both, 1)


def test_a_join_whose_operands_plans_bound_it_within_the_limit_runs_no_count(engine, spark,
                                                                             tmp_path):
    """The JOIN guard first reads the operands' bounds from their plans (relations sira holds,
    ``rowbound``): when their product is within ``max_tuples`` no job counts the join keys.
    Past it, or with an operand whose plan says nothing (a file), the count still runs and
    refuses a join over the limit."""
    from sira.errors import TooManyTuples
    r = Relation.from_rows({"k": INT, "a": INT}, [(i % 3, i) for i in range(30)])
    s = Relation.from_rows({"k": INT, "b": INT}, [(i % 3, i) for i in range(20)])
    relvars = {"r": r, "s": s}
    expected = sira.evaluate("join(r, s)", relvars)
    assert len(expected) == 200
    with JobCounter(spark) as bounded:  # 30 x 20 = 600: within the limit without a count
        assert engine.evaluate("join(r, s)", relvars, max_tuples=600) == expected
    with JobCounter(spark) as counted:
        assert engine.evaluate("join(r, s)", relvars, max_tuples=599) == expected
    assert len(counted.jobs) == len(bounded.jobs) + 1, (counted.jobs, bounded.jobs)
    with pytest.raises(TooManyTuples, match="JOIN"):
        engine.evaluate("join(r, s)", relvars, max_tuples=199)
    path = str(tmp_path / "r.parquet")
    engine.dataframe("r", relvars).write.parquet(path)
    from_file = {"r": spark.read.parquet(path), "s": s}
    with pytest.raises(TooManyTuples, match="JOIN"):
        engine.evaluate("join(r, s)", from_file, max_tuples=199)
    assert engine.evaluate("join(r, s)", from_file, max_tuples=200) == expected


def test_a_sequence_of_a_relation_is_sized_from_its_plan_without_a_count(spark):
    """WINDOWBY and SPLWINDOW size their chunks by the rows of their input: the optimizer's
    estimate, else the bound the plan shows (a relation sira holds), else a count (a job)."""
    from sira_spark.convert import to_dataframe
    from sira_spark.windowby import estimated_or_counted
    r = Relation.from_rows({"k": INT, "a": INT}, [(i % 3, i) for i in range(30)])
    df = to_dataframe(spark, r).where("a > 3").repartition(4)
    with JobCounter(spark) as planned:
        assert estimated_or_counted(df) == (30, False)  # at most 30: no job
    assert planned.jobs == []
    rdd = spark.sparkContext.parallelize([(i % 3, i) for i in range(30)])
    unknown = spark.createDataFrame(rdd, "k int, a int").where("a > 3")  # no estimate, no bound
    with JobCounter(spark) as counted:
        assert estimated_or_counted(unknown) == (26, True)
    assert len(counted.jobs) == 1


def test_a_pack_after_an_unpack_or_a_split_needs_no_count_to_cut_its_sequence(engine,
                                                                             monkeypatch):
    """UNPACK and the split before a PACK on several attributes count what they make (for
    max_tuples); a short result keeps that count, so the PACK after it is one bucket with no
    job to count and cut its sequence (``packing._bucketed``)."""
    import sira_spark.packing as packing
    from sira_spark.rowbound import at_most
    seen = []
    real = packing._bucketed

    def bucketed(df, order):
        seen.append(at_most(df, packing.SEQUENCE_BUCKET_ROWS))
        return real(df, order)

    monkeypatch.setattr(packing, "_bucketed", bucketed)
    r = Relation.from_rows({"k": INT, "x": LONGINTERVAL, "y": LONGINTERVAL},
                           [(i % 2, Interval(i, i + 6), Interval(i, i + 6)) for i in range(8)])
    for text in ("pack(unpack(r, (x)), (x))", "pack(r, (x, y))"):
        seen.clear()
        assert engine.evaluate(text, {"r": r}) == sira.evaluate(text, {"r": r})
        # the split on y cuts the pieces of the split on x, whose number no plan shows
        assert seen.count(False) == (0 if "unpack" in text else 1), (text, seen)
    df = engine.dataframe("unpack(r, (x))", {"r": r})
    assert at_most(df, 48) and not at_most(df, 47)  # 8 x 6 points counted, some equal


def test_a_packed_result_gets_no_second_distinct(engine, spark):
    """PACK reads a DataFrame relvar without distinct() (duplicates cannot change its islands)
    and yields one row per island of each rest: a final distinct() of that is a wasted
    aggregation (as on DuckDB, a packed result at the root gets none)."""
    rows = [(1, (0, 5)), (1, (3, 8)), (1, (3, 8)), (2, (10, 12))]  # a duplicate row
    df = spark.createDataFrame(rows, "k long, during struct<begin: long, end: long>")
    packed = engine.dataframe("pack(r, (during))", {"r": df})
    plan = packed._jdf.queryExecution().executedPlan().toString()
    assert "functions=[]" not in plan, plan  # no aggregation without functions: no distinct()
    assert sorted((r.k, r.during.begin, r.during.end) for r in packed.collect()) == \
        [(1, 0, 8), (2, 10, 12)]


def test_dataframe_accepts_a_tree(engine):
    tree = L(FILES).restrict(attr("pagesize") > 20000).project("filename")
    df = engine.dataframe(tree)
    assert df.count() == 1
    assert [r[0] for r in df.collect()] == ["DATABASECATALOG.SPDB"]


def test_explain_shows_spark_physical_operators(engine, spark):
    text = engine.explain("project(join(restrict(files, gt(pagesize, 1)), sizes), (label))",
                          {"files": files_dataframe(spark), "sizes": SIZES})
    assert isinstance(text, str)
    assert re.search(r"HashAggregate|BroadcastHashJoin|SortMergeJoin|Filter", text), text
    extended = engine.explain(QUERY, {"files": FILES}, extended=True)
    assert "Physical Plan" in extended


# --------------------------------------------------------------------------- runtime failures

NUMBERS = Relation.from_rows({"a": INT}, [(0,), (1,), (2,)])


def _spark_error(text, relvars, cls):
    with pytest.raises(cls) as err:
        sira.evaluate(text, relvars, engine="spark")
    with pytest.raises(cls):
        sira.evaluate(text, relvars)  # the Python engine agrees on the class
    return err.value


def test_division_by_zero_on_spark_is_a_sira_error_naming_the_node():
    err = _spark_error("extend(R,(x(div(a, 0))))", {"R": NUMBERS}, DivisionByZero)
    assert "EXTEND" in str(err)


def test_overflow_on_spark_is_a_sira_error_naming_the_node():
    err = _spark_error("extend(R,(x(plus(2147483647, a))))", {"R": NUMBERS}, IntOverflow)
    assert "EXTEND" in str(err)


def test_iunion_of_disjoint_intervals_on_spark_is_an_interval_error():
    err = _spark_error("extend(R,(x(iunion(intinterval(from(1)to(2)), "
                       "intinterval(from(5)to(7))))))", {"R": NUMBERS}, IntervalError)
    assert "iunion" in str(err)
    assert "EXTEND" in str(err)


def test_the_failing_node_is_the_lowest_one_not_the_root():
    text = "project(restrict(extend(R,(x(div(a, minus(a, 1))))), gt(x, 0)), (x))"
    err = _spark_error(text, {"R": NUMBERS}, DivisionByZero)
    assert "EXTEND" in str(err)
    assert "PROJECT" not in str(err)


def test_restrict_failures_name_restrict():
    err = _spark_error("restrict(R, gt(div(10, a), 1))", {"R": NUMBERS}, DivisionByZero)
    assert "RESTRICT" in str(err)


# --------------------------------------------------------------------------- build errors

BUILD_ERRORS = [
    ("restrict(R, gt(zz, 1))", sira.UnknownAttribute),
    ("project(R, (a, zz))", sira.UnknownAttribute),
    ("union(R, S)", HeadingMismatch),
    ("minus(R, S)", HeadingMismatch),
    ("extend(R, (x(plus(a, string(x)))))", SiraTypeError),
    ("join(R, T)", SiraTypeError),  # a shared name with two types
]


@pytest.mark.parametrize("text,cls", BUILD_ERRORS)
def test_tree_building_errors_are_the_python_class_before_spark_runs(engine, spark, text, cls):
    s = Relation.from_rows({"b": STRING}, [("x",)])
    t = Relation.from_rows({"a": STRING}, [("x",)])
    relvars = {"R": NUMBERS, "S": s, "T": t}
    with pytest.raises(cls) as py_err:
        sira.evaluate(text, relvars)
    with JobCounter(spark) as jobs:
        with pytest.raises(cls) as spark_err:
            sira.evaluate(text, relvars, engine="spark")
        # relvars as DataFrames: their headings are read from the schema, still no job
        with pytest.raises(cls):
            engine.evaluate(text, {"R": engine.load(NUMBERS), "S": engine.load(s),
                                   "T": engine.load(t)})
    assert jobs.jobs == []
    assert type(spark_err.value) is type(py_err.value)


def test_builder_errors_happen_before_any_engine():
    with pytest.raises(HeadingMismatch):
        L(NUMBERS).union(L(Relation.from_rows({"b": STRING}, [])))
    with pytest.raises(sira.UnknownAttribute):
        L(NUMBERS).project("zz")


def test_a_dataframe_with_the_wrong_columns_for_the_tree_is_a_type_error(engine, spark):
    tree = sira.relvar("files", FILES.heading).project("pagesize")
    wrong = spark.createDataFrame([(1, 2)], "pagesize int, filename int")
    with pytest.raises(SiraTypeError):
        sira.evaluate(tree, {"files": wrong}, engine="spark")


# --------------------------------------------------------------------------- text, operators

def test_evaluate_text_on_spark():
    got = sira.evaluate("summarizeby(files, (pagesize), (cnt(plus(int(1)))))",
                        {"files": FILES}, engine="spark")
    assert got == Relation.from_rows({"pagesize": INT, "cnt": INT},
                                     [{"pagesize": 32768, "cnt": 1},
                                      {"pagesize": 16384, "cnt": 2}])


def test_evaluate_a_scalar_expression_on_spark():
    assert sira.evaluate("plus(2, 3)", engine="spark") == 5


def test_unsupported_operators_is_a_short_known_list():
    from sira_spark.functions import unsupported_operators
    assert unsupported_operators() == []  # every library operator has a translation


def test_an_unsupported_operator_says_so(monkeypatch):
    from sira_spark import functions
    monkeypatch.delitem(functions.TRANSLATIONS, "trim")  # as if it had no translation
    with pytest.raises(sira.errors.NotSupportedOnSpark):
        sira.evaluate("extend(files, (t(trim(filename))))", {"files": FILES}, engine="spark")


# --------------------------------------------------------------------------- degree 0

A_EMPTY = Relation.from_rows({"a": INT}, [])


@pytest.mark.parametrize("tree,expected", [
    (L(TABLE_DEE), TABLE_DEE),
    (L(TABLE_DUM), TABLE_DUM),
    (L(NUMBERS).project(()), TABLE_DEE),
    (L(A_EMPTY).project(()), TABLE_DUM),
    (L(NUMBERS).restrict(attr("a") > 5).project(()), TABLE_DUM),
    (L(TABLE_DEE).join(L(NUMBERS)), NUMBERS),
    (L(TABLE_DUM).join(L(NUMBERS)), A_EMPTY),
    (L(TABLE_DEE).union(L(TABLE_DUM)), TABLE_DEE),
    (L(TABLE_DUM).union(L(TABLE_DUM)), TABLE_DUM),
    (L(TABLE_DEE).minus(L(TABLE_DUM)), TABLE_DEE),
    (L(TABLE_DEE).intersect(L(TABLE_DEE)), TABLE_DEE),
    (L(TABLE_DEE).semijoin(L(TABLE_DUM)), TABLE_DUM),
    (L(TABLE_DEE).semiminus(L(TABLE_DEE)), TABLE_DUM),
    (L(NUMBERS).semijoin(L(TABLE_DEE)), NUMBERS),
    (L(NUMBERS).semijoin(L(TABLE_DUM)), A_EMPTY),
    (L(TABLE_DEE).extend(x=lit(1)), Relation.from_rows({"x": INT}, [(1,)])),
    (L(TABLE_DUM).aggregate(n=("plus", lit(1))), Relation.from_rows({"n": INT}, [(0,)])),
], ids=repr)
def test_degree_zero_relations_behave(tree, expected):
    assert sira.evaluate(tree) == expected
    assert sira.evaluate(tree, engine="spark") == expected


DEGREE_ZERO_BUGS = [
    (L(TABLE_DEE).minus(L(TABLE_DEE)), TABLE_DUM),
    (L(TABLE_DUM).minus(L(TABLE_DUM)), TABLE_DUM),
    (L(TABLE_DEE).intersect(L(TABLE_DUM)), TABLE_DUM),
    (L(TABLE_DEE).xminus(L(TABLE_DEE)), TABLE_DUM),
    (L(NUMBERS).project(()).minus(L(TABLE_DEE)), TABLE_DUM),
]


@pytest.mark.parametrize("tree,expected", DEGREE_ZERO_BUGS, ids=repr)
def test_degree_zero_set_operators_on_spark(tree, expected):
    assert sira.evaluate(tree) == expected
    assert sira.evaluate(tree, engine="spark") == expected


def test_summarizeby_with_an_empty_by_list_on_a_nonempty_relation():
    tree = L(NUMBERS).summarizeby((), n=("plus", lit(1)), hi=("max", attr("a")))
    expected = Relation.from_rows({"hi": INT, "n": INT}, [(2, 3)])
    assert sira.evaluate(tree) == expected
    assert sira.evaluate(tree, engine="spark") == expected


def test_summarizeby_with_an_empty_by_list_on_an_empty_relation():
    tree = L(A_EMPTY).summarizeby((), n=("plus", lit(1)))
    expected = Relation.from_rows({"n": INT}, [])
    assert sira.evaluate(tree) == expected
    assert sira.evaluate(tree, engine="spark") == expected


# --------------------------------------------------------------------------- RVAs

def test_join_on_a_relation_valued_attribute_as_in_the_seed():
    import specs
    (case,) = [c for c in specs.all_cases() if c.id.endswith("join-rva")]
    specs.run_case(case, "spark")


def _signatures(rows, extra):
    """A relation {<extra>: STRING, operandsignature: RELATION{typename, ordinal}}."""
    inner = sira.Heading.of({"ordinal": INT, "typename": STRING})  # rows in this order
    heading = {extra: STRING, "operandsignature": RelationType(inner)}
    return Relation.from_rows(heading, [{extra: name,
                                         "operandsignature": Relation.from_rows(inner, sig)}
                                        for name, sig in rows])


def test_join_on_a_relation_valued_attribute():
    # the same RVA values built from rows in different orders must still match
    left = _signatures([("CONCAT", [(1, "STRING"), (2, "STRING")]),
                        ("LENGTH", [(1, "STRING")]),
                        ("PLUS", [(2, "INT"), (1, "INT")])], "oinm")
    right = _signatures([("MATCHES", [(2, "STRING"), (1, "STRING")]),
                         ("NEG", [(1, "INT")]),
                         ("TIMES", [(1, "INT"), (2, "INT")]),
                         ("NOP", [])], "other")
    tree = L(left).join(L(right)).project("oinm", "other")
    expected = Relation.from_rows({"oinm": STRING, "other": STRING},
                                  [("CONCAT", "MATCHES"), ("PLUS", "TIMES")])
    assert sira.evaluate(tree) == expected
    assert sira.evaluate(tree, engine="spark") == expected
    # the RVAs survive the round trip to Spark and back as relations
    assert sira.evaluate(L(left).join(L(right)), engine="spark") == \
        sira.evaluate(L(left).join(L(right)))


def test_grouped_rvas_join_and_ungroup_on_spark():
    r = Relation.from_rows({"b": STRING, "k": INT},
                           [("a", 1), ("b", 1), ("b", 2), ("a", 2), ("a", 3)])
    s = Relation.from_rows({"b": STRING, "j": INT},
                           [("b", 7), ("a", 7), ("a", 8), ("c", 9)])
    tree = L(r).group(rv=("b",)).join(L(s).group(rv=("b",)))
    expected = sira.evaluate(tree)
    assert len(expected) == 3  # (1,7), (2,7), (3,8)
    assert sira.evaluate(tree, engine="spark") == expected
    back = tree.ungroup("rv").project("k", "j", "b")
    assert sira.evaluate(back, engine="spark") == sira.evaluate(back)


# --------------------------------------------------------------------------- intervals

def test_interval_relations_round_trip_including_unbounded():
    r = Relation.from_rows({"k": INT, "x": INTINTERVAL},
                           [(1, Interval(0, 4)), (1, Interval(3, 9)), (2, Interval(5, None))])
    assert sira.evaluate(L(r), engine="spark") == r
    packed = L(r).pack("x")
    assert sira.evaluate(packed, engine="spark") == sira.evaluate(packed)


# --------------------------------------------------------------------------- engine registry

FRESH_PROCESS = textwrap.dedent("""
    import pandas as pd
    import sira
    r = sira.Relation.from_rows({"a": sira.INT}, [(1,)])
    sira.evaluate("restrict(r, gt(a, 0))", {"r": r}, engine="spark")
    print(sira.evaluate("join(r, r)", {"r": r}) == r)
    n = sira.Relation.from_rows({"a": sira.INT}, [(2147483647,), (1,)])
    for text in ("extend(n, (b(plus(a, 1))))", "extend(n, (b(div(a, minus(a, 1)))))",
                 "extend(n, (b(mult(tofloat(a), 1e300))))",
                 # found below the root: sira re-runs the operands (noop writes) to name it
                 "project(extend(n, (b(plus(a, 1)))), (b))"):
        try:
            sira.evaluate(text, {"n": n}, engine="spark")
        except sira.errors.ArithmeticFault as err:
            print(type(err).__name__)
    print(len(sira.evaluate("r", {"r": pd.DataFrame({"a": [1, 2]})}, engine="spark")))
""")


@pytest.fixture(scope="module")
def fresh_process():
    """What a fresh Python process running Spark first prints (stdout lines, stderr)."""
    root = pathlib.Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    done = subprocess.run([sys.executable, "-c", FRESH_PROCESS],
                          capture_output=True, text=True, cwd=root, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split(), done.stderr


def test_python_engine_works_after_spark_ran_first(fresh_process):
    """In a fresh process, a Spark evaluation first, then the Python engine on a JOIN (sira_spark
    imports sira.engine.closure, which once left the other Python families unregistered)."""
    out, err = fresh_process
    assert out[0] == "True", err[-2000:]


def test_spark_errors_print_nothing_but_the_sira_error(fresh_process):
    """Overflow, division by zero and FLOAT overflow on Spark: the sira error and nothing else,
    no Java stack trace of the failed task, no JSON log record of the exception."""
    out, err = fresh_process
    assert out[1:5] == ["IntOverflow", "DivisionByZero", "FloatOverflow", "IntOverflow"], \
        err[-2000:]
    assert "\tat org.apache" not in err
    assert "Exception in task" not in err
    assert "QueryContextLogger" not in err
    assert " ERROR " not in err, err[-2000:]  # no log line of a failed task or write
    # nor a Python worker's traceback: a failed task's sibling tasks are abandoned, and their
    # workers found the JVM gone (BrokenPipeError) and printed it (sira_spark.daemon)
    assert "Traceback" not in err, err[-2000:]


def test_a_spark_query_is_quiet_on_the_console(fresh_process):
    """No log4j INFO/WARN lines and no pandas warnings from the driver or the workers (the
    fresh process above, whose last query reads a pandas DataFrame)."""
    out, err = fresh_process
    assert out[5:] == ["2"], err[-2000:]
    noisy = [ln for ln in err.splitlines() if " WARN " in ln or " INFO " in ln or "Warning" in ln]
    assert noisy == []


JVM_KILLER = """
import os, signal, sys, time
import sira
import sira_spark.closure
from sira_spark import SparkEngine
e = SparkEngine.local()
r = sira.Relation.from_rows({"a": sira.INT, "b": sira.INT}, [(1, 2), (2, 3)])
assert len(sira.evaluate("r", {"r": r}, engine=e)) == 2
real = sira_spark.closure.partitions_for
def killing(df, rows):  # the JVM dies in TCLOSE's own jobs, as out of memory would end it
    parts = real(df, rows)
    os.kill(e.spark.sparkContext._gateway.proc.pid, signal.SIGKILL)
    time.sleep(1)
    return parts
sira_spark.closure.partitions_for = killing
try:
    sira.evaluate("project(tclose(r, (a, b)), (a))", {"r": r}, engine=e)
except Exception as err:
    print(type(err).__name__, "while running TCLOSE (in PROJECT)" in str(err))
sira_spark.closure.partitions_for = real
print(e.stopped)
# as the error says: the shared engine starts a new JVM (it got the dead context back)
print(len(sira.evaluate("restrict(r, gt(a, 1))", {"r": r}, engine="spark")))
"""


def test_the_dataframe_of_a_scalar_expression_is_refused_by_name(engine):
    from sira.errors import SiraTypeError
    with pytest.raises(SiraTypeError, match=r"dataframe: expected a relational expression, "
                                            r"got plus\(1, ?2\) \(a scalar"):
        engine.dataframe("plus(1, 2)")
    assert engine.evaluate("plus(1, 2)") == 3


def test_a_dead_jvm_is_engine_unavailable_never_a_py4j_error(tmp_path):
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", JVM_KILLER], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.stdout.split() == ["EngineUnavailable", "True", "True", "1"], \
        done.stdout + done.stderr[-2000:]


def test_unpack_cuts_long_intervals_into_pieces_before_exploding_them(engine, monkeypatch):
    """UNPACK on Spark cuts an interval longer than ``UNPACK_PIECE_POINTS`` into pieces of
    that many points (the last shorter), spread over partitions, before each piece is exploded:
    one interval of 10,000,000 points was one array in one task and ran the heap out. INT, DATE
    and TIMESTAMP points, two attributes, lengths around the piece size, against the Python
    engine."""
    import datetime as dt

    import sira_spark.packing
    from sira.intervals import DATEINTERVAL, TIMESTAMPINTERVAL
    monkeypatch.setattr(sira_spark.packing, "UNPACK_PIECE_POINTS", 3)
    day, noon = dt.date(2020, 1, 1), dt.datetime(2020, 1, 1, 12)
    r = Relation.from_rows(
        {"k": INT, "during": INTINTERVAL, "on": DATEINTERVAL, "at": TIMESTAMPINTERVAL},
        [(k, Interval(k, k + length), Interval(day, day + dt.timedelta(days=k % 4 + 1)),
          Interval(noon, noon + dt.timedelta(microseconds=length)))
         for k, length in enumerate([1, 2, 3, 4, 6, 7, 10])])
    for text in ("unpack(r, (during))", "unpack(r, (on, during))", "unpack(r, (at))"):
        assert engine.evaluate(text, {"r": r}) == sira.evaluate(text, {"r": r}), text


def test_unpack_and_closures_spread_their_rows_over_partitions_sized_by_their_counts(
        engine, monkeypatch):
    """UNPACK makes its points distinct, and TCLOSE and GTCLOSE join and dedup each round, over
    about ``ROWS_PER_CHUNK`` rows a partition (sized by the points counted first, by the closure
    so far), not the shuffle partitions alone: at 10,000,000 tuples those held 10M rows a task
    and ran the default heap out."""
    import sira_spark.closure
    import sira_spark.windowby
    from sira_spark.convert import to_relation

    monkeypatch.setattr(sira_spark.windowby, "ROWS_PER_CHUNK", 10)
    r = Relation.from_rows({"k": INT, "during": INTINTERVAL},
                           [(k % 3, Interval(k, k + 4)) for k in range(20)])
    df = engine.dataframe("unpack(r, (during))", {"r": r})
    # 80 points: stored with their count for the steps after (packing._with_known_rows), in
    # the 8 partitions of the distinct that made them (the shuffle partitions are 2)
    assert df.rdd.getNumPartitions() == 8
    assert to_relation(df, r.heading) == sira.evaluate("unpack(r, (during))", {"r": r})

    sizes = []
    partitions_for = sira_spark.closure.partitions_for

    def recorded(df, rows):
        sizes.append((rows, partitions_for(df, rows)))
        return sizes[-1][1]

    monkeypatch.setattr(sira_spark.closure, "partitions_for", recorded)
    e = Relation.from_rows({"a": INT, "b": INT}, [(i, i + 1) for i in range(40)])
    assert engine.evaluate("tclose(e, (a, b))", {"e": e}) == sira.evaluate("tclose(e, (a, b))",
                                                                           {"e": e})
    assert sizes[0] == (40, 4) and sizes[-1][1] > sizes[0][1], sizes
    # GTCLOSE, one edge a round: a chain of 6 edges closes into 21 paths, one shorter a round;
    # 6 tuples get the shuffle partitions (2), the last round's 21 get 3
    sizes.clear()
    g = "gtclose(extend(e, (n(int(1)))), (a, b), (n(plus(__L__n, __R__n))))"
    chain = Relation.from_rows({"a": INT, "b": INT}, [(i, i + 1) for i in range(6)])
    assert engine.evaluate(g, {"e": chain}) == sira.evaluate(g, {"e": chain})
    assert [rows for rows, _ in sizes] == [6, 11, 15, 18, 20, 21], sizes
    assert sizes[-1][1] > sizes[0][1], sizes


@pytest.mark.parametrize("columns", [["a b"], ["K", "k"], ["1x"]])
def test_a_spark_dataframe_s_column_names_are_checked_as_the_python_engine_checks_them(columns):
    """A Spark DataFrame whose column is no attribute name (``a b``) gave an attribute ``a b``
    on Spark, where the Python engine refuses it (DataFormatError); names differing in case
    are one attribute twice on both."""
    from sira_spark import default_engine
    df = default_engine().spark.createDataFrame([tuple(range(len(columns)))], columns)
    with pytest.raises(sira.SiraError) as python:
        sira.evaluate("r", {"r": df})
    with pytest.raises(type(python.value)):
        sira.evaluate("r", {"r": df}, engine="spark")


@pytest.mark.parametrize("error", [
    NullValue(relvar="s", attribute="v", count=1),
    UnknownRelvar(relvar="q", available=("r", "s")),
    TooManyTuples(operator="SPLWINDOW", limit=1000)])
def test_a_sira_error_raised_in_a_python_worker_reaches_the_driver_with_its_fields(error):
    """A Python step (a split scan, a live handler) reports a sira error as text inside Spark's
    exception (sira_spark.compiler.reported); the driver raises the same class with the same
    fields (they were lost: a live query's NullValue named neither stream nor attribute)."""
    from sira_spark.compiler import reported, translate_failure
    with pytest.raises(RuntimeError) as raised:
        with reported():
            raise error
    spark_text = (f"org.apache.spark.api.python.PythonException: Traceback ...\n"
                  f"RuntimeError: {raised.value}\n SQLSTATE: 38000\n\tat org.apache...")
    back = translate_failure(Exception(spark_text), sira.parse("r", {"r": {"a": INT}}))
    assert type(back) is type(error)
    assert back.field_values() == error.field_values()
    assert str(back) == f"{error} (in RELVAR on Spark)"


def test_a_field_json_cannot_hold_is_left_out_of_the_report():
    from sira.errors import SiraValueError
    from sira.intervals import Interval
    from sira_spark.compiler import reported, translate_failure
    error = NullValue(relvar="s", attribute="v", count=1, value=Interval(1, 2))
    with pytest.raises(RuntimeError) as raised:
        with reported():
            raise error
    back = translate_failure(Exception(str(raised.value)), sira.parse("r", {"r": {"a": INT}}))
    assert isinstance(back, SiraValueError)
    assert (back.relvar, back.attribute, back.count, back.value) == ("s", "v", 1, None)


def test_a_report_whose_fields_were_cut_short_still_gives_its_error():
    from sira_spark.compiler import translate_failure
    text = "RuntimeError: SIRA|NullValue|relvar 's': attribute 'v' holds NULL |SIRA-FIELDS| {\"rel"
    back = translate_failure(Exception(text), sira.parse("r", {"r": {"a": INT}}))
    assert type(back) is NullValue and back.relvar is None
    assert str(back) == "relvar 's': attribute 'v' holds NULL (in RELVAR on Spark)"
