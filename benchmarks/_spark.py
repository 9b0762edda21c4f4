"""Helpers shared by the Spark benchmarks (``spark.py``, ``windows.py``): the session, the final
action, timing, result checks and plan printing. Importing this module does not start Spark."""

from __future__ import annotations

import gc
import math
import os
import platform
import re
import textwrap
import time


def make_session(master: str, partitions: int, driver_memory: str, app_name: str):
    """A local session configured as sira_spark's own, with the driver memory 10M rows need."""
    from sira_spark.session import local_session
    return local_session(master, partitions, driver_memory, app_name)


def noop(df):
    """The common final action: run the whole plan, keep nothing."""
    df.write.format("noop").mode("overwrite").save()
    return df


def materialise(df):
    """Persist an input and compute it now (not timed)."""
    df = df.persist()
    df.count()
    return df


def jvm_gc(spark):
    """Ask the JVM to collect garbage, so Spark's ContextCleaner frees old shuffles/checkpoints."""
    try:
        spark.sparkContext._jvm.System.gc()
    except Exception:  # noqa: BLE001 (best effort)
        pass


def best_time_pair(spark, fn_a, fn_b, repeat: int):
    """Best-of-``repeat`` for two functions, interleaved (a, b, a, b, ...) so that drift in
    machine speed hits both alike. Returns (best a, best b, last result a, last result b)."""
    best_a = best_b = math.inf
    res_a = res_b = None
    for _ in range(repeat):
        for which in (0, 1):
            res_a, res_b = (None, res_b) if which == 0 else (res_a, None)
            gc.collect()
            jvm_gc(spark)
            t0 = time.perf_counter()
            res = (fn_a if which == 0 else fn_b)()
            elapsed = time.perf_counter() - t0
            if which == 0:
                res_a, best_a = res, min(best_a, elapsed)
            else:
                res_b, best_b = res, min(best_b, elapsed)
    return best_a, best_b, res_a, res_b


def checksum(df, cols=None):
    """(row count, order-independent hash sum) of a DataFrame's rows (on ``cols``, default all)."""
    from pyspark.sql import functions as F
    cols = df.columns if cols is None else cols
    h = F.pmod(F.xxhash64(*[F.col(f"`{c}`") for c in cols]), F.lit(2_147_483_647))
    row = df.select(F.count(F.lit(1)).alias("n"), F.sum(h).alias("h")).first()
    return int(row["n"]), int(row["h"] or 0)


def rows_of(df, cols) -> set:
    """The rows of ``df`` on ``cols``, collected as a set of tuples (small results only)."""
    return {tuple(r) for r in df.select(*[f"`{c}`" for c in cols]).collect()}


def plan_text(df) -> str:
    """The "simple" explain() text (physical plan) of a DataFrame, made shorter to read: the
    subtree under each InMemoryRelation (how the persisted input was generated) is dropped, and
    so are expression ids (``#123L``) and exchange plan ids."""
    text = df._sc._jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), "simple")
    out, cut = [], None
    for line in text.splitlines():
        depth = len(line) - len(line.lstrip(" :|+-"))
        if cut is not None and depth > cut:
            continue
        cut = depth if "InMemoryRelation" in line else None
        line = re.sub(r"#\d+L?", "", line)
        line = re.sub(r", \[plan_id=\d+\]", "", line)
        line = re.sub(r", StorageLevel\([^)]*\)", "", line)
        out.append(line)
    return "\n".join(out)


def side_by_side(left: str, right: str, titles=("sira", "hand-written"), width: int = 95) -> str:
    """Two texts (plans) in two columns, long lines wrapped."""
    def wrap(text):
        out = []
        for line in text.rstrip().splitlines():
            indent = len(line) - len(line.lstrip())
            out.extend(textwrap.wrap(line, width, subsequent_indent=" " * min(indent + 4, 40),
                                     drop_whitespace=False) or [""])
        return out
    a, b = wrap(left), wrap(right)
    lines = [f"{titles[0]:<{width}} | {titles[1]}", f"{'-' * width}-+-{'-' * width}"]
    for i in range(max(len(a), len(b))):
        lines.append(f"{a[i] if i < len(a) else '':<{width}} | {b[i] if i < len(b) else ''}")
    return "\n".join(lines)


def machine_info(spark) -> list:
    """Lines describing Spark, Java, Python and the machine, for the report's header."""
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 1024 ** 2:.1f} GiB"
    except OSError:
        mem = "unknown"
    jvm = spark.sparkContext._jvm
    try:
        java = f"{jvm.System.getProperty('java.vm.name')} {jvm.System.getProperty('java.version')}"
    except Exception:  # noqa: BLE001
        java = "unknown"
    conf = spark.sparkContext.getConf()
    return [f"Spark {spark.version} (pyspark), master {spark.sparkContext.master}, shuffle "
            f"partitions {spark.conf.get('spark.sql.shuffle.partitions')}, driver memory "
            f"{conf.get('spark.driver.memory', '1g')}, AQE "
            f"{spark.conf.get('spark.sql.adaptive.enabled')}, ANSI "
            f"{spark.conf.get('spark.sql.ansi.enabled')}, Java {java}",
            f"Python {platform.python_version()} ({platform.python_implementation()})",
            f"machine: {platform.platform()}, {platform.machine()}, cpu count "
            f"{os.cpu_count()}, memory {mem}"]


def add_spark_arguments(parser) -> None:
    """The command-line options every Spark benchmark takes."""
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=4,
                        help="spark.sql.shuffle.partitions (sira_spark's default is 4)")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--promises", action="store_true",
                        help="make sira's promises (trust_unique=True, trust_no_nulls=True) "
                             "instead of measuring its default options")
    parser.add_argument("--collect-limit", type=int, default=200_000,
                        help="collect and compare result sets when n is at most this")
