"""The Spark engine object: a SparkSession plus the compiler.

    >>> from sira_spark import SparkEngine
    >>> engine = SparkEngine.local()                 # doctest: +SKIP
    >>> engine = SparkEngine(spark=my_session)       # doctest: +SKIP
    >>> sira.evaluate(expr, relvars, engine=engine)  # doctest: +SKIP

Relvars may be Relations, DataFrames, table names (``"table:name"``) or Parquet paths
(``"parquet:/path"``), so big relations never pass through Python; the other kinds every engine
takes (a pandas or polars DataFrame, an Arrow table, a DuckDB relation, ``"csv:PATH"``,
``"json:PATH"``, ``"arrow:PATH"``) are read by sira's own readers first (``sira.io.intake``), so
they give the same relation, or the same error, as on the other engines.

A DataFrame, table or Parquet file may hold duplicate rows, so sira applies ``distinct()`` to
it when it is read. When you know it holds none, say so and that (a full shuffle) is skipped:
``unique(df)`` for one relvar, or ``SparkEngine(..., trust_unique=True)`` for all of them.
Asserting uniqueness of data that has duplicates gives results with duplicates.

    >>> from sira_spark import unique
    >>> sira.evaluate("join(r, s)", {"r": unique(df_r), "s": df_s}, engine=engine)  # doctest: +SKIP

sira has no nulls. A DataFrame, table or Parquet relvar holding a NULL (in any column, nested
fields included; an interval's null ``end`` means "unbounded above", as inside sira) or a NaN
(in a FLOAT) is refused with ``NullValue`` naming the relvar, the attribute and how many rows,
before anything runs, unless the caller names a policy: ``nulls="drop"`` leaves out every row
holding a NULL or NaN. Give it to the engine (``SparkEngine(nulls="drop")``) or to one call
(``sira.evaluate(..., engine="spark", nulls="drop")``, which wins). The check is one Spark
job per such relvar, computing every column's counts together; it is skipped for Relations
(they cannot hold nulls) and for columns whose schema says they are not nullable. Data known to
hold none (a Parquet file read back in, where Spark marks every column nullable) can skip it:
``SparkEngine(..., trust_no_nulls=True)`` says so for every relvar, as ``trust_unique`` does
for duplicates; data breaking that promise then gives wrong answers.

    >>> sira.evaluate("r", {"r": df_with_nulls}, engine="spark")  # doctest: +SKIP
    Traceback (most recent call last):
    ...
    sira.errors.NullValue: relvar 'r': attribute 's' holds NULL in 1 row; sira has no nulls ...
    >>> sira.evaluate("r", {"r": df_with_nulls}, engine="spark", nulls="drop")  # doctest: +SKIP

A missing Parquet path or table, or a file Spark cannot read, is a ``DataSourceError`` naming
the relvar. An engine whose SparkSession was stopped raises ``EngineUnavailable`` saying so
(it never starts a session behind the caller's back); ``default_engine()``, which
``engine="spark"`` uses, replaces a stopped shared session with a new one. Without pyspark or
Java, ``engine="spark"`` raises ``EngineUnavailable`` saying what to install.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import sys

from sira.errors import DataSourceError, EngineUnavailable
from sira.io.intake import kind_of, path_of, refuse, relation_of
from sira.types import STRING
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


def java_available() -> bool:
    """Whether a ``java`` Spark can start is there: under ``JAVA_HOME`` when it is set (as
    Spark's launcher looks), else on ``PATH``."""
    home = os.environ.get("JAVA_HOME")
    if home:
        return os.access(os.path.join(home, "bin", "java"), os.X_OK)
    return shutil.which("java") is not None


def require_spark() -> None:
    """Raise ``EngineUnavailable`` saying what to install when pyspark or Java is missing
    (on a machine without pyspark: "the spark engine is not available: pyspark is not
    installed; install pyspark: pip install 'sira[spark]'").

        >>> require_spark()  # here both are installed: nothing happens
    """
    if importlib.util.find_spec("pyspark") is None:
        raise EngineUnavailable(engine="spark", reason="pyspark is not installed",
                                install="pyspark: pip install 'sira[spark]'")
    if not java_available():
        where = "under JAVA_HOME" if os.environ.get("JAVA_HOME") else "on PATH"
        raise EngineUnavailable(engine="spark", reason=f"Spark needs Java and there is no "
                                f"'java' {where}",
                                install="a Java runtime, 17 or 21 (for example the "
                                "openjdk-17-jre-headless package), and set JAVA_HOME or PATH")


def local_session(master: str = "local[2]", shuffle_partitions: int = 4,
                  driver_memory: str | None = None, app_name: str = "sira"):
    """A SparkSession configured as sira expects (ANSI mode, UTC, quiet logs), created or
    reused; ``driver_memory`` (``"8g"``) and the environment variable
    ``SIRA_SPARK_JAVA_OPTIONS`` (more options for the driver's JVM, such as
    ``-XX:TieredStopAtLevel=1`` for a short script of a few queries on small data) only
    apply when this starts the JVM.

    Raises:
        EngineUnavailable: pyspark or Java is missing, or Spark could not start.
    """
    require_spark()
    forget_dead_jvm()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    quiet_python_workers()
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.master(master).appName(app_name)
    if driver_memory is not None:
        builder = builder.config("spark.driver.memory", driver_memory)
    if hasattr(socket, "AF_UNIX"):
        # The JVM talks to its Python workers over a Unix socket rather than TCP on loopback:
        # over TCP each task of a Python step (the split scans' mapInArrow) waited about 40 ms
        # for its first bytes (a delayed acknowledgement); measured on local[2], a step of
        # mapInArrow over 20 rows 112 ms -> 68 ms
        builder = builder.config("spark.python.unix.domain.socket.enabled", "true")
    try:
        spark = (builder
                 .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
                 .config("spark.default.parallelism", str(shuffle_partitions))
                 .config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false")
                 .config("spark.sql.ansi.enabled", "true")
                 .config("spark.sql.session.timeZone", "UTC")
                 .config("spark.log.structuredLogging.enabled", "false")
                 # PySpark would send every DataFrame call's Python call site to the JVM
                 # (about 40% of the calls a translation makes); sira reports its own errors
                 .config("spark.python.sql.dataFrameDebugging.enabled", "false")
                 # PySpark's worker daemon, quiet about the tasks a failure abandons
                 .config("spark.python.daemon.module", "sira_spark.daemon")
                 .config("spark.driver.extraJavaOptions",
                         f"-Dlog4j2.level=error -Dlog4j2.configurationFile={LOG4J} "
                         + os.environ.get("SIRA_SPARK_JAVA_OPTIONS", ""))
                 .getOrCreate())
    except Exception as err:  # the JVM did not start (a wrong Java, no memory...)
        raise EngineUnavailable(engine="spark", reason=f"Spark could not start: "
                                f"{spark_message(err)}") from err
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def forget_dead_jvm() -> bool:
    """When the JVM that PySpark started has died or stopped answering (out of memory, killed),
    forget it and its context, so that the next session starts a new JVM: PySpark would
    otherwise hand back the dead context, whose every call fails with
    ``ConnectionRefusedError``. Returns whether there was one to forget (a JVM PySpark did not
    start, or one that answers, is left alone; one still exiting is killed).

        >>> forget_dead_jvm()  # this process's JVM, if any, runs
        False
    """
    from pyspark import SparkContext
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if proc is None or (proc.poll() is None and _answers(gateway)):
        return False
    if proc.poll() is None:  # out of memory, it stopped answering and is still exiting
        proc.kill()
    from pyspark.sql import SparkSession
    from pyspark.sql.context import SQLContext
    with SparkContext._lock:
        sc = SparkContext._active_spark_context
        if sc is not None:
            sc._jsc = None  # engines still holding it report themselves stopped
            if getattr(sc, "_accumulatorServer", None) is not None:
                sc._accumulatorServer.shutdown()
                sc._accumulatorServer = None
        SparkContext._active_spark_context = None
        SparkContext._gateway = None
        SparkContext._jvm = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    SQLContext._instantiatedContext = None
    try:
        gateway.close()
    except Exception:  # noqa: BLE001 - its sockets lead nowhere now
        pass
    return True


def _answers(gateway) -> bool:
    """Whether a Py4J gateway's JVM answers a call (only a failure to reach it says no: a
    JVM that answers with an error is alive, and is never killed)."""
    from py4j.protocol import Py4JNetworkError
    try:
        gateway.jvm.java.lang.System.nanoTime()
    except (Py4JNetworkError, ConnectionError, EOFError):  # refused, reset: nobody listens
        return False
    except Exception:  # noqa: BLE001 - an answer, if an error
        return True
    return True


#: errors only on the console for the sessions sira starts
LOG4J = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")

#: pandas 3 makes pyspark warn on every import, in the driver and in every Python worker
_PANDAS_WARNING = "ignore:PySpark does not yet fully support pandas:FutureWarning"


def quiet_python_workers() -> None:
    """Silence pyspark's warning about pandas 3 (sira converts without the features it warns
    about) in this process and in the Python workers Spark starts from it."""
    import warnings
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                            category=FutureWarning)
    current = os.environ.get("PYTHONWARNINGS", "")
    if _PANDAS_WARNING not in current:
        os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [current, _PANDAS_WARNING]))


def spark_message(err: Exception) -> str:
    """The useful line of a Spark or Py4J error: ``[CONDITION] message``, without SQLSTATE."""
    import re
    text = str(err)
    m = re.search(r"\[[A-Z][A-Z0-9_.]*\][^\n]*", text)
    line = m.group(0) if m else next((ln for ln in text.splitlines() if ln.strip()),
                                     type(err).__name__)
    return re.sub(r"\s*SQLSTATE: \w+\.?\s*$", "", line.strip())


def spark_failures() -> tuple:
    """The exception classes of a failure inside Spark (not a bug in sira's Python code)."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException
    return (Py4JError, PySparkException)


def session_stopped(spark) -> bool:
    """Whether a SparkSession's context has been stopped."""
    sc = spark.sparkContext
    if sc._jsc is None:
        return True
    try:
        return bool(sc._jsc.sc().isStopped())
    except Exception:  # the JVM itself is gone
        return True


class SparkEngine:
    """Evaluates sira trees on Spark: ``evaluate`` collects a Relation, ``dataframe`` does not.

    Args:
        spark: a SparkSession to use; when None a local one is created (``master``).
        master: the master URL for a session created here (``local[2]``, ``spark://host:7077``).
        shuffle_partitions: ``spark.sql.shuffle.partitions`` for a session created here.
        driver_memory: ``spark.driver.memory`` (``"8g"``) for a session created here.
        trust_unique: treat every DataFrame / table / Parquet relvar as duplicate-free (no
            ``distinct()`` when it is read); ``unique(df)`` says it for one relvar.
        nulls: what to do with DataFrame / table / Parquet rows holding a NULL or NaN:
            ``"error"`` (the default: refuse the relvar with ``NullValue``) or ``"drop"``
            (leave those rows out). A ``nulls=`` option of one call overrides it.
        trust_no_nulls: treat every DataFrame / table / Parquet relvar as free of NULL and NaN
            (no checking job); a ``nulls=`` option of one call still applies.

    A session given is set to ANSI mode and UTC (``spark.sql.ansi.enabled``,
    ``spark.sql.session.timeZone``) for good: sira's results, and the DataFrames it returns,
    depend on both. Give ``spark.newSession()`` to keep your own session's settings.

    Raises:
        EngineUnavailable: no session was given and pyspark or Java is missing.
    """

    def __init__(self, spark=None, master: str = "local[2]", shuffle_partitions: int = 4,
                 trust_unique: bool = False, nulls: str = "error", trust_no_nulls: bool = False,
                 driver_memory: str | None = None):
        from sira.engine.guards import check_flag
        from .convert import null_policy
        self.nulls = null_policy(nulls)
        check_flag("trust_unique", trust_unique, "SPARK")
        check_flag("trust_no_nulls", trust_no_nulls, "SPARK")
        self.trust_no_nulls = trust_no_nulls
        self.spark = spark if spark is not None else local_session(master, shuffle_partitions,
                                                                   driver_memory)
        self.trust_unique = trust_unique
        self.require_running()
        # ANSI mode makes Spark raise on overflow and division by zero, as sira does; a UTC
        # session makes a ``timestamp`` instant read as its UTC date and time
        self.spark.conf.set("spark.sql.ansi.enabled", "true")
        self.spark.conf.set("spark.sql.session.timeZone", "UTC")

    @classmethod
    def local(cls, master: str = "local[2]", shuffle_partitions: int = 4,
              trust_unique: bool = False, nulls: str = "error",
              trust_no_nulls: bool = False, driver_memory: str | None = None) -> "SparkEngine":
        """An engine on a local session (``driver_memory``: ``"8g"``, when this starts the
        JVM)."""
        return cls(None, master, shuffle_partitions, trust_unique, nulls, trust_no_nulls,
                   driver_memory)

    @property
    def stopped(self) -> bool:
        """Whether this engine's SparkSession has been stopped (the engine cannot run then)."""
        return session_stopped(self.spark)

    def require_running(self) -> None:
        """Raise ``EngineUnavailable`` when the engine's SparkSession has been stopped."""
        if self.stopped:
            raise EngineUnavailable(engine="spark", reason="its SparkSession has been stopped "
                                    "(or its JVM is gone); make a new SparkEngine "
                                    "(sira.evaluate(..., engine='spark') starts a new shared "
                                    "session by itself)")

    def _tree(self, expr, relvars, options: dict):
        """The tree of ``expr`` (text parsed against the relvars' headings), rewritten by
        :mod:`sira.rewrite` unless ``options`` say ``rewrite=False``."""
        import sira
        from sira.engine.guards import check_options, check_relvars, checked_expression
        from sira.rewrite import optimize
        check_options(options)
        check_relvars(relvars)
        expr = checked_expression(expr)
        if isinstance(expr, str):
            catalog = {k: self.heading_of(v, relvar=k) for k, v in (relvars or {}).items()}
            expr = sira.parse(expr, catalog)
        if options.pop("rewrite", True) and isinstance(expr, sira.Node):
            expr = optimize(expr)  # never changes a result
        return expr

    def heading_of(self, value, relvar: str | None = None):
        """The sira heading of a relvar given as a Relation, DataFrame, table or Parquet path."""
        from .convert import heading_of_dataframe
        if isinstance(value, Unique):
            value = value.value
        if isinstance(value, Relation):
            return value.heading
        return heading_of_dataframe(self.load(value, relvar), relvar)

    def is_unique(self, value) -> bool:
        """Whether a relvar value is known to hold no duplicate rows (no ``distinct`` needed)."""
        return self.trust_unique or isinstance(value, (Unique, Relation))

    def load(self, value, relvar: str | None = None, nulls: str | None = None):
        """A DataFrame for a relvar value (a Relation is sent to Spark; a pandas or polars
        DataFrame, an Arrow table, a DuckDB relation or a CSV, JSON or Arrow file is read by
        sira's readers first, under the ``nulls`` policy, default the engine's).

        Raises:
            DataSourceError: a missing table or Parquet path, or a file Spark cannot read.
            EngineUnavailable: the engine's SparkSession has been stopped.
        """
        from pyspark.sql import DataFrame

        from .convert import to_dataframe
        self.require_running()
        if isinstance(value, Unique):
            value = value.value
        if isinstance(value, Relation):
            return to_dataframe(self.spark, value)
        if isinstance(value, DataFrame):
            return value
        kind = kind_of(value)
        if kind == "table":
            rest = value.partition(":")[2]
            return self._read(value, relvar, lambda: self.spark.table(rest))
        if kind == "parquet":
            return self._parquet(value, relvar)
        return to_dataframe(self.spark, self.intake(value, relvar, nulls))

    def _parquet(self, value: str, relvar):
        """A Parquet file or directory: every file of one schema, the partition columns of
        ``name=value`` directories read as text (Spark's own inference off for the read) and
        cast to the types :mod:`sira.io.partitions` gives them on every engine."""
        from pyspark.sql import functions as F
        from sira.io.partitions import dataset_base, partition_types

        from .types import spark_type
        path = path_of(value)
        key = "spark.sql.sources.partitionColumnTypeInference.enabled"
        before = self.spark.conf.get(key)
        self.spark.conf.set(key, "false")
        try:
            df = self._read(value, relvar, lambda: self._reader(path).parquet(path))
            self._one_parquet_schema(value, relvar, df)
        finally:
            self.spark.conf.set(key, before)
        kinds = partition_types(df.inputFiles(), dataset_base(path)) if df.columns else {}
        casts = {n: F.col(f"`{n}`").cast(spark_type(t)) for n, t in kinds.items()
                 if t is not STRING and n in df.columns}
        return df.withColumns(casts) if casts else df

    def _reader(self, path: str):
        """Spark's reader for ``path``; a glob (``d/*/*.parquet``) finds the partition
        directories below the directory before its first pattern, as a directory does."""
        from sira.io.partitions import dataset_base
        base = dataset_base(path)
        reader = self.spark.read
        return reader.option("basePath", base) if base != path.rstrip("/") else reader

    def _one_parquet_schema(self, value: str, relvar, df) -> None:
        """Refuse Parquet files of different columns read as one relvar (a directory): Spark
        takes one file's columns and leaves a later file's extra column out. Merging every
        file's footer (``mergeSchema``) must give the columns Spark read, as on the other
        engines (:func:`sira.io.arrowdata.one_parquet_schema`); a type two files disagree on
        fails the merge, and Spark's read says which."""
        from sira.errors import DataFormatError, DataSourceError
        if len(df.inputFiles()) < 2:
            return
        try:
            merged = self._read(value, relvar, lambda: self._reader(path_of(value)).option(
                "mergeSchema", "true").parquet(path_of(value)))
        except DataSourceError as err:  # two files give one column different types
            raise DataFormatError(f"relvar '{relvar}': the files of a Parquet dataset must "
                                  f"have the same columns; those of {value} do not merge "
                                  f"({err.reason})", source=value) from None
        if merged.schema.simpleString() != df.schema.simpleString():
            raise DataFormatError(f"relvar '{relvar}': the files of a Parquet dataset must "
                                  f"have the same columns; {value} holds files with "
                                  f"{df.schema.simpleString()} and "
                                  f"{merged.schema.simpleString()} among them",
                                  source=value)

    def intake(self, value, relvar: str | None = None, nulls: str | None = None):
        """A relvar value as Spark reads it: Relations, DataFrames, ``table:`` and
        ``parquet:`` names as they are; a pandas or polars DataFrame, an Arrow table, a DuckDB
        relation or a CSV, JSON or Arrow file read by sira's own readers into a Relation, as on
        every engine (:mod:`sira.io.intake`), under the ``nulls`` policy (default the engine's).

        Raises:
            SiraTypeError: a value that is not a relation (a plain string, a dict...).
        """
        from pyspark.sql import DataFrame
        if isinstance(value, (Relation, DataFrame, Unique)):
            return value
        kind = kind_of(value)
        if kind in ("table", "parquet"):
            return value
        if kind == "unknown":
            raise refuse(value, relvar or "?", "Spark")
        policy = self.nulls if nulls is None else nulls
        return relation_of(value, relvar or "?", nulls="drop" if policy == "drop" else "error")

    def _read(self, source: str, relvar, read):
        from .compiler import quiet_task_failures
        with quiet_task_failures(self.spark):
            try:
                return read()
            except spark_failures() as err:
                failure = err
        raise DataSourceError(relvar=relvar, source=source, reason=spark_message(failure))

    def admit(self, relvar: str, value, df, heading, options: dict | None = None):
        """The DataFrame of a relvar that did not come from sira (a DataFrame, table or Parquet
        file), checked and put in sira's layout (``convert.admit``): NULL and NaN refused or
        dropped per the ``nulls`` policy (the call's option, else the engine's; not looked for
        at all when the engine trusts the data and the call names no policy).

        Raises:
            NullValue: a NULL or NaN under the ``"error"`` policy.
            DataSourceError: the data cannot be read while checking it.
        """
        from .compiler import quiet_task_failures
        from .convert import admit, null_policy
        options = options or {}
        if "nulls" in options:
            policy = null_policy(options["nulls"])
        else:
            policy = "trust" if self.trust_no_nulls else self.nulls
        with quiet_task_failures(self.spark):
            try:
                return admit(df, heading, relvar, policy)
            except spark_failures() as err:
                failure = err
        value = value.value if isinstance(value, Unique) else value
        source = value if isinstance(value, str) else "a DataFrame"
        raise DataSourceError(relvar=relvar, source=source, reason=spark_message(failure))

    def _intake(self, relvars, options: dict) -> dict:
        """Every relvar as Spark reads it (:meth:`intake`), once per call."""
        from sira.engine.guards import check_options, check_relvars
        check_options(options)
        check_relvars(relvars)
        return {k: self.intake(v, k, options.get("nulls")) for k, v in (relvars or {}).items()}

    def _options(self, options: dict) -> dict:
        from .convert import null_policy
        if "nulls" in options:
            null_policy(options["nulls"])
        return options

    def dataframe(self, expr, relvars=None, **options):
        """The DataFrame plan of a relational expression, not collected (relvars from outside
        sira are checked for NULL and NaN now, one Spark job each), for Spark's own actions
        (``write.parquet``, ``show``) or more DataFrame steps:

            >>> import sira
            >>> from sira_spark import default_engine
            >>> r = sira.Relation.from_rows({"a": sira.INT}, [{"a": 1}, {"a": 2}])
            >>> df = default_engine().dataframe("restrict(r, gt(a, 1))", {"r": r})
            >>> [row.a for row in df.collect()]
            [2]

        The steps that run while the plan is made (a closure's rounds, a guard's count) fail
        with sira's errors, as ``evaluate`` does. An action of yours runs the rest: its
        failures are Spark's own exceptions (an INT overflow is Spark's ``ArithmeticException``
        under ANSI mode, where ``evaluate`` raises ``IntOverflow`` naming the operator)."""
        self.require_running()
        options = dict(options)
        relvars = self._intake(relvars, options)
        node = self._tree(expr, relvars, options)
        return self._compiled(relvars, self._options(options), lambda c: c.dataframe(node))

    def evaluate(self, expr, relvars=None, **options):
        """Evaluate on Spark and collect the result as a Relation (or a scalar).

        Options: ``nulls`` (``"error"`` or ``"drop"``, see the class), ``max_tuples``,
        ``rewrite`` (default True: the tree goes through :mod:`sira.rewrite` first).
        """
        self.require_running()
        options = dict(options)
        relvars = self._intake(relvars, options)
        node = self._tree(expr, relvars, options)
        return self._compiled(relvars, self._options(options), lambda c: c.evaluate(node))

    def _compiled(self, relvars, options, action):
        """``action(compiler)``. A ``max_tuples`` guard counts rows; over relvars read without
        distinct() (their duplicates cannot change the result) those rows may repeat, so a
        refusal there is checked again with every relvar made distinct, and only a refusal of
        the sets stands."""
        from sira.errors import TooManyTuples

        from .compiler import Compiler
        c = Compiler(self, relvars, options)
        try:
            return action(c)
        except TooManyTuples:
            if not c.undeduped:
                raise
        return action(Compiler(self, relvars, options, every_distinct=True))

    def explain(self, expr, relvars=None, extended: bool = False) -> str:
        """Spark's physical plan for an expression."""
        df = self.dataframe(expr, relvars)
        return df._jdf.queryExecution().toString() if extended else \
            df._jdf.queryExecution().executedPlan().toString()


def default_engine() -> SparkEngine:
    """One shared local engine (created on first use, and again when its session was stopped;
    ``SIRA_SPARK_MASTER`` and ``SIRA_SPARK_PARTITIONS`` choose its master URL and shuffle
    partitions).

    Raises:
        EngineUnavailable: pyspark or Java is missing.
    """
    global _DEFAULT
    if _DEFAULT is None or _DEFAULT.stopped:
        _DEFAULT = SparkEngine.local(os.environ.get("SIRA_SPARK_MASTER", "local[2]"),
                                     int(os.environ.get("SIRA_SPARK_PARTITIONS", "4")))
    return _DEFAULT


# SparkEngine.stream, live queries on Structured Streaming, is installed by sira_spark.live
importlib.import_module(".live", __package__)
