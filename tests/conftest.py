"""Shared fixtures: the engines every spec case runs on."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys

import pytest

# Spark's Python workers must run this interpreter (the one with sira installed), on loopback.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("SIRA_SPARK_PARTITIONS", "2")  # small data: few partitions, fast tests
# many short queries on small data in a JVM that lives the whole run: one GC thread (two cores
# for two workers). Both compilers: the driver plans every query (the analyzer, the optimizer,
# task serialization), the same code thousands of times, which C2's code runs faster once a
# minute or two has compiled it. Measured on this suite (two workers, two cores): 947 s of
# pytest with both compilers against 1,076 s with the first tier only
# (-XX:TieredStopAtLevel=1, which had saved 15% when the suite was a tenth of its size).
# Whole runs of the same code differ here by up to 200 s, so that pair alone proves little;
# the gain rests on the Spark files' own times (0.70-0.83x each) and a loop in one JVM
os.environ.setdefault("SIRA_SPARK_JAVA_OPTIONS", "-XX:+UseSerialGC")

ENGINES = ["python"]


def spark_available() -> bool:
    if shutil.which("java") is None:
        return False
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    try:
        import sira_spark
    except ImportError:
        return False
    return hasattr(sira_spark, "default_engine")


if spark_available():
    ENGINES.append("spark")


def duckdb_available() -> bool:
    try:
        import duckdb  # noqa: F401
        import pyarrow  # noqa: F401
        import sira_duckdb  # noqa: F401
    except ImportError:
        return False
    return True


if duckdb_available():
    ENGINES.append("duckdb")


def pytest_collection_modifyitems(config, items):
    """Spark's tests and the README's scripts (some of which start Spark) run first, the
    rest after them (a stable sort: each group keeps its order). Spark's take 80% of the run's
    time, in tests of up to a minute; under pytest-xdist, which hands tests out in this order,
    the quick ones then fill the gaps at the end, instead of one worker finishing a long Spark
    test alone while the other waits."""
    items.sort(key=lambda item: not ("spark" in item.nodeid or "readme" in item.nodeid))


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


# Spark compiles every new plan's stages to Java (whole-stage code generation); on the tests'
# tiny relations that compiling is most of a query's time (about a fifth of the Spark tests').
# The tests run Spark's interpreted evaluation, which gives the same rows (it is Spark's
# fallback for any plan whose generated code fails to compile); the README's scripts
# (tests/test_readme.py, their own processes) run with code generation on, as users do.
# Whole-stage code generation (``spark.sql.codegen.wholeStage``) is off too: it only wraps the
# same operators in WholeStageCodegen nodes, which no plan test reads (they look for exchanges
# and windows). Only the jobs run while a plan is built change: interpreted, a query of an SPL
# test took 5.2 s against 7.5 s compiled (``splwindow(s, ts, sliding, delta(i, 3))`` over 120
# tuples, warm; 5.8 s with whole-stage code generation still planned).
#
# Adaptive query execution is off too, except in ``_ADAPTIVE_MODULES``: it re-plans a query
# after each of its shuffle stages, and on tiny relations that re-planning is a large part of
# the time (measured: 11 SPL split tests 68 s with it, 39 s without; 167 spec cases 197 s
# against 160 s). It changes how rows are spread over tasks, never which rows come out; the
# modules named run every operator on random inputs with it on (the default users get), and
# the plan tests (tests/test_spark_plans.py) read plans with it off, as before.
_CODEGEN_MODULES: set = set()
_ADAPTIVE_MODULES = {"test_differential", "test_duplicates"}


@pytest.fixture(autouse=True)
def _spark_code_generation(request):
    session = sys.modules.get("pyspark.sql") and \
        sys.modules["pyspark.sql"].SparkSession.getActiveSession()
    if session is not None:
        module = request.module.__name__.rsplit(".", 1)[-1]
        mode = "FALLBACK" if module in _CODEGEN_MODULES \
            or os.environ.get("SIRA_TEST_CODEGEN") else "NO_CODEGEN"
        adaptive = module in _ADAPTIVE_MODULES \
            or bool(os.environ.get("SIRA_TEST_ADAPTIVE"))
        try:
            session.conf.set("spark.sql.codegen.factoryMode", mode)
            session.conf.set("spark.sql.codegen.wholeStage", str(mode == "FALLBACK").lower())
            session.conf.set("spark.sql.adaptive.enabled", str(adaptive).lower())
        except Exception:  # noqa: BLE001 - a test stopped the JVM on purpose
            pass
    yield


#: inside :func:`checkpoints_in_plan`, the executed plans of the steps stored so far
_STORED_PLANS: list | None = None


@contextlib.contextmanager
def checkpoints_in_plan():
    """Inside the block :func:`executed_plan` also shows the executed plan of every step a
    DataFrame's ``localCheckpoint`` stored (a stored step's own plan does not show in the
    plan that reads it, a scan of what it stored; SPLWINDOW and WINDOWBY store their windows
    to count them against ``max_tuples``). Each step is still stored: reading the plans does
    not make a query recompute its stored steps at every later action, as making
    ``localCheckpoint`` return its DataFrame did (a plan test of 40 tuples took 41 s so)."""
    global _STORED_PLANS
    from pyspark.sql import SparkSession
    cls = type(SparkSession.getActiveSession().range(0))  # the DataFrame class in use
    real = cls.localCheckpoint
    saved, _STORED_PLANS = _STORED_PLANS, []

    def recorded(self, eager=True, storageLevel=None):
        _STORED_PLANS.append(self._jdf.queryExecution().executedPlan().toString())
        return real(self, eager, storageLevel)

    cls.localCheckpoint = recorded
    try:
        yield
    finally:
        cls.localCheckpoint = real
        _STORED_PLANS = saved


@contextlib.contextmanager
def windows_in_plan():
    """Inside the block SPLWINDOW and WINDOWBY on Spark neither count nor store their windows
    (``sira_spark.guards.check_held``), so the plan of a translation ends with the steps that
    make the windows (a stored DataFrame's plan is a scan of what it stored)."""
    import sira_spark.spl
    import sira_spark.windowby
    modules = (sira_spark.spl, sira_spark.windowby)
    real = [m.check_held for m in modules]
    for m in modules:
        m.check_held = lambda c, node, df, column="tuples": df
    try:
        yield
    finally:
        for m, fn in zip(modules, real):
            m.check_held = fn


def record_calls(monkeypatch, module, name: str) -> list:
    """``module.name`` replaced, for the test, by a wrapper that appends each call's
    positional arguments to the list returned and then calls the original."""
    calls, real = [], getattr(module, name)

    def wrapper(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


def evaluated_without(text, relvars, *paths):
    """``text`` evaluated on the Python engine with each ``(module, name)`` of ``paths``
    replaced by a function that returns None, so the engine takes its other way (the pointwise
    split: the reference its faster paths are checked against)."""
    import sira
    saved = [(module, name, getattr(module, name)) for module, name in paths]
    for module, name, _ in saved:
        setattr(module, name, lambda *args: None)
    try:
        return sira.evaluate(text, relvars)
    finally:
        for module, name, real in saved:
            setattr(module, name, real)


def executed_plan(df) -> str:
    """The executed (physical) plan of a Spark DataFrame, as text; inside
    :func:`checkpoints_in_plan` followed by those of the steps stored so far."""
    plan = df._jdf.queryExecution().executedPlan().toString()
    return "\n".join([plan, *(_STORED_PLANS or [])])


@contextlib.contextmanager
def every_sequence_split(split: bool = True):
    """Inside the block Spark cuts every sequence into buckets however short
    (``sira_spark.packing.SEQUENCE_BUCKET_ROWS`` = 0), as a long one is cut; ``split=False``
    leaves the setting as it is (a short sequence is one bucket)."""
    from sira_spark import packing
    saved = packing.SEQUENCE_BUCKET_ROWS
    packing.SEQUENCE_BUCKET_ROWS = 0 if split else saved
    try:
        yield
    finally:
        packing.SEQUENCE_BUCKET_ROWS = saved


def skewed_and_sparse_streams(rng, heading) -> tuple:
    """Two SPL test streams over ``heading`` (ts, seq, k, i, p): one key holding 80% of 100
    tuples (ts = seq plus a little), and 150 tuples two keys share with gaps of 0 to 8 between
    them (partition eviction by age breaks there)."""
    import itertools

    from sira import Relation
    skewed = Relation.from_rows(heading, [
        {"ts": seq + rng.randrange(0, 3) * rng.randrange(0, 4), "seq": seq,
         "k": "a" if rng.random() < 0.8 else "b", "i": rng.randrange(-9, 9),
         "p": rng.random() < 0.2} for seq in range(100)])
    times = itertools.accumulate(rng.choice((0, 1, 1, 2, 3, 5, 8)) for _ in range(150))
    sparse = Relation.from_rows(heading, [
        {"ts": t, "seq": seq, "k": rng.choice("ab"), "i": rng.randrange(-9, 9),
         "p": rng.random() < 0.2} for seq, t in enumerate(times)])
    return skewed, sparse
