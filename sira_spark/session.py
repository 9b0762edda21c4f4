"""The Spark engine object: a SparkSession plus the compiler.

    >>> from sira_spark import SparkEngine
    >>> engine = SparkEngine.local()                 # doctest: +SKIP
    >>> engine = SparkEngine(spark=my_session)       # doctest: +SKIP
    >>> sira.evaluate(expr, relvars, engine=engine)  # doctest: +SKIP

Relvars may be Relations, DataFrames, table names (``"table:name"``) or Parquet paths
(``"parquet:/path"``), so big relations never pass through Python.

A DataFrame, table or Parquet file may hold duplicate rows, so sira applies ``distinct()`` to
it when it is read. When you know it holds none, say so and that (a full shuffle) is skipped:
``unique(df)`` for one relvar, or ``SparkEngine(..., trust_unique=True)`` for all of them.
Asserting uniqueness of data that has duplicates gives results with duplicates.

    >>> from sira_spark import unique
    >>> sira.evaluate("join(r, s)", {"r": unique(df_r), "s": df_s}, engine=engine)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys

from sira.errors import SiraError
from sira.values import Relation

_DEFAULT = None


class Unique:
    """A relvar value (DataFrame, ``table:`` or ``parquet:`` name) asserted to hold no duplicate
    rows; made by ``unique``."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"unique({self.value!r})"


def unique(value) -> Unique:
    """Assert that a DataFrame relvar (or table / Parquet path) has no duplicate rows, so sira
    does not apply ``distinct()`` to it."""
    if isinstance(value, Unique):
        return value
    return Unique(value)


def local_session(master: str = "local[2]", shuffle_partitions: int = 4,
                  driver_memory: str | None = None, app_name: str = "sira"):
    """A SparkSession configured as sira expects (ANSI mode, UTC, quiet logs), created or
    reused; ``driver_memory`` (``"8g"``) only applies when this starts the JVM."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.master(master).appName(app_name)
    if driver_memory is not None:
        builder = builder.config("spark.driver.memory", driver_memory)
    spark = (builder
             .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
             .config("spark.default.parallelism", str(shuffle_partitions))
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.ansi.enabled", "true")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.log.structuredLogging.enabled", "false")
             .config("spark.driver.extraJavaOptions", "-Dlog4j2.level=error")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class SparkEngine:
    """Evaluates sira trees on Spark: ``evaluate`` collects a Relation, ``dataframe`` does not.

    Args:
        spark: a SparkSession to use; when None a local one is created (``master``).
        master: the master URL for a session created here (``local[2]``, ``spark://host:7077``).
        shuffle_partitions: ``spark.sql.shuffle.partitions`` for a session created here.
        trust_unique: treat every DataFrame / table / Parquet relvar as duplicate-free (no
            ``distinct()`` when it is read); ``unique(df)`` says it for one relvar.
    """

    def __init__(self, spark=None, master: str = "local[2]", shuffle_partitions: int = 4,
                 trust_unique: bool = False):
        self.spark = spark if spark is not None else local_session(master, shuffle_partitions)
        self.trust_unique = trust_unique
        # ANSI mode makes Spark raise on overflow and division by zero, as sira does
        self.spark.conf.set("spark.sql.ansi.enabled", "true")
        self.spark.conf.set("spark.sql.session.timeZone", "UTC")

    @classmethod
    def local(cls, master: str = "local[2]", shuffle_partitions: int = 4,
              trust_unique: bool = False) -> "SparkEngine":
        return cls(None, master, shuffle_partitions, trust_unique)

    def _tree(self, expr, relvars):
        import sira
        if isinstance(expr, str):
            catalog = {k: self.heading_of(v) for k, v in (relvars or {}).items()}
            return sira.parse(expr, catalog)
        return expr

    def heading_of(self, value):
        """The sira heading of a relvar given as a Relation, DataFrame, table or Parquet path."""
        from .convert import heading_of_dataframe
        if isinstance(value, Unique):
            value = value.value
        if isinstance(value, Relation):
            return value.heading
        return heading_of_dataframe(self.load(value))

    def is_unique(self, value) -> bool:
        """Whether a relvar value is known to hold no duplicate rows (no ``distinct`` needed)."""
        return self.trust_unique or isinstance(value, (Unique, Relation))

    def load(self, value):
        """A DataFrame for a relvar value (a Relation is sent to Spark)."""
        from pyspark.sql import DataFrame

        from .convert import to_dataframe
        if isinstance(value, Unique):
            value = value.value
        if isinstance(value, Relation):
            return to_dataframe(self.spark, value)
        if isinstance(value, DataFrame):
            return value
        if isinstance(value, str):
            kind, _, rest = value.partition(":")
            if kind == "table":
                return self.spark.table(rest)
            if kind == "parquet":
                return self.spark.read.parquet(rest)
        raise SiraError(f"a Spark relvar must be a Relation, a DataFrame, 'table:NAME' or "
                        f"'parquet:PATH' (got {value!r})")

    def dataframe(self, expr, relvars=None, **options):
        """The DataFrame plan of a relational expression, not collected."""
        from .compiler import Compiler
        node = self._tree(expr, relvars)
        return Compiler(self, relvars or {}, options).compile(node)

    def evaluate(self, expr, relvars=None, **options):
        """Evaluate on Spark and collect the result as a Relation (or a scalar)."""
        from .compiler import Compiler
        node = self._tree(expr, relvars)
        return Compiler(self, relvars or {}, options).evaluate(node)

    def explain(self, expr, relvars=None, extended: bool = False) -> str:
        """Spark's physical plan for an expression."""
        df = self.dataframe(expr, relvars)
        return df._jdf.queryExecution().toString() if extended else \
            df._jdf.queryExecution().executedPlan().toString()


def default_engine() -> SparkEngine:
    """One shared local engine (created on first use; ``SIRA_SPARK_MASTER`` and
    ``SIRA_SPARK_PARTITIONS`` choose its master URL and shuffle partitions)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = SparkEngine.local(os.environ.get("SIRA_SPARK_MASTER", "local[2]"),
                                     int(os.environ.get("SIRA_SPARK_PARTITIONS", "4")))
    return _DEFAULT
