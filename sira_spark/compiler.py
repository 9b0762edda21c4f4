"""The Spark compiler: one translation per algebra node, children compiled first.

A translation receives the node, its children's DataFrames (columns = the child heading's
attribute names, in sorted order) and the compiler, and returns the node's DataFrame in the same
form. After it, the compiler packs the result on the node's ``pack_list`` (when it has one), so
the pack state matches the Python engine's exactly, unless the translation returns ``Packed(df)``
(a result it packed itself). Nodes without a native translation are
lowered to their derived definition (``LOWERED``); the rest raise NotSupportedOnSpark.

A Spark failure becomes a sira error naming the lowest failing node (``translate_failure``):
overflow, division by zero and sira's own checks keep their sira class, and for RESTRICT,
EXTEND and TRANSFORM the failing tuple is found (``offending_tuple``) so the error carries the
Python engine's fields (``tuple``, ``operator``...). While sira runs a job, Spark's logging of
failed tasks (a Java stack trace per task) and pyspark's JSON record of the exception are kept
off the console (``quiet_task_failures``): the sira error says it all; an untranslated failure
keeps Spark's exception as its ``__cause__``.

    >>> from sira import parse
    >>> sorted(n.__name__ for n in LOWERED)
    ['Changes', 'DivideBy']
"""

from __future__ import annotations

import contextlib
import json
import re
import threading

from sira.algebra.derived import lower_changes, lower_divideby
from sira.algebra.joins import DivideBy
from sira.algebra.windows import Changes
from sira.engine.guards import kept_for_reuse
from sira.errors import (ArithmeticFault, DataSourceError, DivisionByZero, EngineUnavailable,
                         ExecutionError, IntOverflow, NotSupportedOnSpark, SiraError,
                         scalar_not_a_relation)
from sira.expressions.nodes import Expr
from sira import errors as sira_errors
from sira.values import Heading

TRANSLATIONS: dict = {}
LOWERED = {DivideBy: lower_divideby, Changes: lower_changes}


def translates(node_class, direct=None):
    """Register the Spark translation of one node class.

    ``direct(node, compiler)``, when given, is tried first, before any operand is compiled: a
    DataFrame for a node with a plan of its own that reads below its operands (a SUMMARIZEBY
    over a HOP reads the stream, not the window table), else None. Its operands are then never
    compiled, so no job they would run first (a ``max_tuples`` count) runs."""
    def register(fn):
        if direct is not None:
            fn.direct = direct
        TRANSLATIONS[node_class] = fn
        return fn
    return register


def _load_families():
    from . import (aggregation, basic, closure, joins, nesting, packing, setops,  # noqa: F401
                   spl, windowby, windows, windowtables)


def _distinct_rows(node) -> bool:
    """Whether ``node``'s translation yields distinct rows whatever its operands hold (so a final
    ``distinct()`` is not needed): a PROJECT dropping attributes (its ``distinct()``). A packed
    result (one tuple per island of each rest: a ``groupBy``) is known in ``compile``.
    Conservative: False for anything else."""
    from sira.algebra.basic import Project
    return isinstance(node, Project) and node.heading.degree < node.source.heading.degree


class Packed:
    """What a translation returns when its result is already packed on the node's pack_list
    (a sweep line packs as it goes), so the compiler does not pack it again. A packed result
    holds each tuple once (one per island of each rest), so the final result needs no
    ``distinct()`` when it is one."""

    def __init__(self, df):
        self.df = df


def ordered(df, heading: Heading):
    """The DataFrame's columns in the heading's order (the invariant every translation keeps);
    ``df`` itself when they already are (a step of the plan fewer: each step costs Spark an
    analysis of the whole plan, about 2-10 ms, and Py4J a dozen round trips)."""
    from .convert import in_order
    return in_order(df, heading.names)


class Compiler:
    """Compiles one tree for one engine and set of relvars."""

    def __init__(self, engine, relvars: dict, options: dict | None = None,
                 every_distinct: bool = False):
        _load_families()
        self.every_distinct = every_distinct  # every relvar from outside sira made distinct
        self.engine = engine
        self.spark = engine.spark
        self.relvars = relvars
        self.options = options or {}
        self._memo: dict = {}
        self.lowering: list = []  # the derived operators being compiled as their definition
        # the relvars whose duplicates could change the result (sira.algebra.duplicates; None:
        # every relvar); a relvar read without distinct() sets ``undeduped``
        self.need_distinct: frozenset | None = None
        self.undeduped = False
        self._distinct: set = set()  # nodes whose DataFrame holds distinct rows, whatever it read
        #: the innermost operator whose translation failed (its own jobs: a closure's rounds, a
        #: guard's count, a sequence's quantiles), so a dead JVM's error can name it
        self.failed_in = None

    def compile(self, node):
        """The DataFrame of ``node`` (not collected)."""
        try:
            return self._memo[node]
        except KeyError:
            pass
        try:
            return self._translated(node)
        except Exception:
            if self.failed_in is None and getattr(node, "children", ()):
                self.failed_in = self.lowering[0] if self.lowering else node
            raise

    def _translated(self, node):
        lower = LOWERED.get(type(node))
        if lower is not None:
            for child in node.children:  # its operands keep their own names in errors
                self.compile(child)
            self.lowering.append(node)
            try:
                df = self.compile(lower(node))
            finally:
                self.lowering.pop()
            distinct = lower(node) in self._distinct
        else:
            fn = TRANSLATIONS.get(type(node))
            if fn is None:
                raise NotSupportedOnSpark(node=node.operator_name)
            from .guards import guarding
            direct = getattr(fn, "direct", None)  # a plan reading below the node's operands
            with guarding(self, node):
                df = None if direct is None else direct(node, self)
            if df is None:
                children = [self.compile(c) for c in node.children]
                with guarding(self, node):
                    df = fn(node, children, self)
            distinct = _distinct_rows(node)
            if isinstance(df, Packed):
                df, distinct = df.df, True
            elif node.packs and node.pack_list:
                from .packing import pack_dataframe
                with guarding(self, node):
                    df = pack_dataframe(df, node.heading, node.pack_list)
                distinct = True
        df = ordered(df, node.heading)
        if kept_for_reuse(node, self.lowering):
            self._memo[node] = df
        if distinct:
            self._distinct.add(node)
        return df

    def evaluate(self, node):
        """Run ``node`` and collect its result (a Relation, or a scalar for an expression)."""
        from .convert import to_relation
        if isinstance(node, Expr):
            from sira.expressions.evaluate import infer_type
            from .functions import column
            t = infer_type(node, Heading())
            df = self.spark.range(1).select(column(node, Heading(), self).alias("v"))
            value = self._run(node, lambda: to_relation(df, Heading.of({"v": t})))
            (row,) = value.body
            return row[0]
        self._root(node)  # a collected result is a Relation: its duplicates collapse
        return self._run(node, lambda: to_relation(self.compile(node), node.heading))

    def dataframe(self, node):
        """``compile`` with Spark failures while planning (a closure's iterations, a relation
        operand's count...) turned into sira errors, as ``evaluate`` does; distinct when a
        relvar's duplicates were left to the end."""
        if isinstance(node, Expr):  # a scalar has no DataFrame of its own
            raise scalar_not_a_relation(node, "dataframe")
        self._root(node)
        df = self._run(node, lambda: self.compile(node))
        return df.distinct() if self.undeduped and node not in self._distinct else df

    def _root(self, node) -> None:
        from sira.algebra.duplicates import relvars_needing_distinct
        from sira.algebra.node import Node
        if isinstance(node, Node) and not self.every_distinct:
            self.need_distinct = relvars_needing_distinct(node)

    def _run(self, node, action):
        from .session import session_stopped
        self.failed_in = None
        try:
            with quiet_task_failures(self.spark):
                try:
                    return action()
                except SiraError:
                    raise
                except Exception as err:  # a Spark/Java failure: say which node was running
                    failure = err
                if session_stopped(self.spark):  # the JVM died (out of memory, killed...)
                    raise _jvm_gone(node, failure, self.failed_in) from None
                error = self.sira_error(failure, node)
        except (ConnectionError, EOFError, OSError) as err:  # the gateway is gone
            if session_stopped(self.spark):
                raise _jvm_gone(node, err, self.failed_in) from None
            raise
        if isinstance(error, ExecutionError):
            raise error from failure  # not understood: Spark's own account is the cause
        raise error

    def sira_error(self, failure: Exception, node) -> SiraError:
        """The sira error for a Spark failure while running ``node`` (error path only)."""
        where = self.failing_node(node)
        error = translate_failure(failure, where)
        if isinstance(error, ArithmeticFault):
            found = scalar_error(where, type(error)) if isinstance(where, Expr) else \
                offending_tuple(where, self, type(error))
            if found is not None:
                fields = found.field_values()
                message = f"{found.message} (in {_name(where)} on Spark)"
                return type(found)(message, **fields)
        return error

    def failing_node(self, node):
        """The lowest node whose plan fails (re-running sub-plans, on the error path only)."""
        from sira.algebra.node import Node
        if not isinstance(node, Node):
            return node
        for child in node.children:
            try:
                self.compile(child).write.format("noop").mode("overwrite").save()
            except Exception:
                return self.failing_node(child)
        return node


def _jvm_gone(node, failure, inner=None) -> EngineUnavailable:
    """The error for a query whose Spark JVM died under it: never a Py4J error. It names
    ``inner`` when the JVM died in that operator's own jobs while the query was being planned
    (within ``node``); else the query's final job, which runs every operator of ``node`` at
    once, so it names them all.

        >>> from sira import INT, parse
        >>> q = parse("project(tclose(e, (a, b)), (a))", {"e": {"a": INT, "b": INT}})
        >>> str(_jvm_gone(q, OSError("refused"), q.children[0])).split(" (most")[0]
        'the spark engine is not available: its JVM stopped while running TCLOSE (in PROJECT)'
        >>> str(_jvm_gone(q, OSError("refused"))).split("running ")[1].split(" (most")[0]
        'PROJECT (the final job of the query, which runs PROJECT and TCLOSE together)'
    """
    from .session import spark_message
    if inner is not None and inner is not node:
        where = f"{_name(inner)} (in {_name(node)})"
    else:
        names = _operator_names(node)
        where = _name(node) if len(names) < 2 else (
            f"{_name(node)} (the final job of the query, which runs "
            f"{', '.join(names[:-1])} and {names[-1]} together)")
    return EngineUnavailable(engine="spark", reason=(
        f"its JVM stopped while running {where} (most often out of memory: give the "
        f"driver more with SparkEngine.local(driver_memory='8g') or spark.driver.memory, or "
        f"use more partitions; Spark said: {spark_message(failure)}); make a new SparkEngine "
        f"(sira.evaluate(..., engine='spark') starts a new shared session by itself)"))


def _operator_names(node, most: int = 8) -> list:
    """The distinct operators of ``node``'s tree other than relvars and literal relations, in
    pre-order (``most`` of them, then "..."; a node that is no operator has none)."""
    from sira.algebra.node import Node
    names: list = []
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, Node):
            continue
        if n.children and _name(n) not in names:
            names.append(_name(n))
        stack.extend(reversed(n.children))
    return names if len(names) <= most else names[:most] + ["..."]


# --------------------------------------------------------------------------- quiet failures

_TASK_LOGGERS = ("org.apache.spark.executor.Executor", "org.apache.spark.scheduler.TaskSetManager",
                 "org.apache.spark.scheduler.TaskSchedulerImpl",
                 "org.apache.spark.sql.execution.datasources.FileFormatWriter",
                 # a write's failed task ("Aborting task" and its stack trace) and its aborted
                 # commit: the noop writes of failing_node, which re-runs a failed query's
                 # operands to name the one that fails
                 "org.apache.spark.util.Utils",
                 "org.apache.spark.sql.execution.datasources.v2")
_PY_LOGGERS = ("DataFrameQueryContextLogger", "SQLQueryContextLogger")
_quiet_lock = threading.Lock()
_quiet_state = {"depth": 0, "saved": None}


@contextlib.contextmanager
def quiet_task_failures(spark):
    """Keep Spark's logs of failed tasks (log4j ERRORs with a Java stack trace) and pyspark's
    JSON record of a captured exception off the console while sira runs a job; restored after
    (nested and concurrent uses share one saved state).

        >>> from sira_spark import default_engine
        >>> with quiet_task_failures(default_engine().spark):
        ...     pass
    """
    with _quiet_lock:
        if _quiet_state["depth"] == 0:
            _quiet_state["saved"] = _silence(spark)
        _quiet_state["depth"] += 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_state["depth"] -= 1
            if _quiet_state["depth"] == 0:
                _restore(_quiet_state.pop("saved"))
                _quiet_state["saved"] = None


def _silence(spark):
    """Turn the task-failure loggers off; returns what ``_restore`` needs."""
    from pyspark.logger import PySparkLogger
    py = [PySparkLogger.getLogger(name) for name in _PY_LOGGERS]
    saved_py = [(logger, logger.disabled) for logger in py]
    for logger in py:
        logger.disabled = True
    saved_java = []
    try:
        jvm = spark.sparkContext._jvm
        log4j = jvm.org.apache.logging.log4j
        configurator = log4j.core.config.Configurator
        for name in _TASK_LOGGERS:
            saved_java.append((name, log4j.LogManager.getLogger(name).getLevel()))
            configurator.setLevel(name, log4j.Level.OFF)
    except Exception:  # no JVM here (a stopped or remote session): nothing to silence
        jvm = None
    return saved_py, saved_java, jvm


def _restore(saved) -> None:
    saved_py, saved_java, jvm = saved
    for logger, disabled in saved_py:
        logger.disabled = disabled
    if jvm is None:
        return
    try:
        configurator = jvm.org.apache.logging.log4j.core.config.Configurator
        for name, level in saved_java:
            configurator.setLevel(name, level)
    except Exception:
        pass


# --------------------------------------------------------------------------- offending tuple

def _row_expressions(node) -> list:
    """The scalar expressions a row-wise node evaluates per tuple of its source."""
    from sira.algebra.basic import Extend, Restrict, Transform
    if isinstance(node, Restrict):
        return [node.condition]
    if isinstance(node, (Extend, Transform)):
        return [e for _, e in node.specs if e is not None]
    return []


def offending_tuple(node, compiler, error_class):
    """The Python engine's error (with ``tuple``) for the first tuple of ``node``'s source on
    which its expressions raise ``error_class``, or None (error path only).

    The tuple is found by Spark itself: a Python UDF runs the Python engine's row function on
    each tuple and the first failing one is collected, so nothing but that tuple reaches the
    driver. Only for RESTRICT, EXTEND and TRANSFORM whose expressions need no relation operand.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    exprs = _row_expressions(node)
    if not exprs or any(_has_relation_operand(e) for e in exprs):
        return None
    heading = node.source.heading
    fails = _failure_test(exprs, heading, error_class)
    try:
        df = compiler.compile(node.source)
        rows = df.where(F.udf(fails, BooleanType())(*[F.col(f"`{n}`") for n in heading.names])) \
            .limit(1).collect()
    except Exception:  # Python workers unavailable (no sira on a cluster's nodes...)
        return None
    if not rows:
        return None
    return _python_error(exprs, heading, tuple(rows[0]), error_class)


def scalar_error(expr, error_class):
    """The Python engine's error for a scalar expression Spark failed on, or None."""
    if _has_relation_operand(expr):
        return None
    return _python_error([expr], Heading(), (), error_class, name_tuple=False)


def _has_relation_operand(expr) -> bool:
    from sira.expressions.nodes import Aggregated, Call, FieldOf, RelationArg
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, RelationArg):
            return True
        if isinstance(e, Call):
            stack.extend(e.args)
        elif isinstance(e, (FieldOf, Aggregated)):
            stack.append(e.source)
    return False


def _failure_test(exprs, heading, error_class):
    """A picklable function of a Spark row's values: does the Python engine raise
    ``error_class`` on it?"""
    def fails(*values):
        return _python_error(exprs, heading, values, error_class) is not None
    return fails


def _python_error(exprs, heading, values, error_class, name_tuple=True):
    from sira.engine import row_error
    from sira.expressions.evaluate import compile_row

    from .convert import from_row
    row = from_row(heading, values)
    try:
        for e in exprs:
            compile_row(e, heading, None)(row)
    except error_class as err:
        return row_error(err, heading, row) if name_tuple else err
    except Exception:
        return None
    return None


def _name(node) -> str:
    return node.operator_name if hasattr(node, "operator_name") else repr(node)


@contextlib.contextmanager
def reported():
    """Inside a Python worker (``mapInArrow``): a sira error raised in the block, in the form
    :func:`translate_failure` turns back into the same sira error on the driver
    (``SIRA|class|message |SIRA-FIELDS| {fields as JSON}``), instead of a Python worker's
    failure."""
    try:
        yield
    except SiraError as err:
        message = str(err).replace("\n", " ")
        raise RuntimeError(f"SIRA|{type(err).__name__}|{message}{_FIELDS}"
                           f"{_portable_fields(err)}") from None


def _portable_fields(err: SiraError) -> str:
    """The error's fields of plain Python values (names, numbers, tuples of them) as JSON
    text; one of sira's own values (an Interval, a Tuple) is left out, not turned into another
    type."""
    plain = (str, int, float, bool, type(None))
    kept = {name: value for name, value in err.field_values().items()
            if type(value) in plain
            or type(value) is tuple and all(type(x) in plain for x in value)}
    return json.dumps(kept, separators=(",", ":"))


_SIRA_RAISED = re.compile(r"SIRA\|(\w+)\|([^\n]*?)(?: SQLSTATE|\n|$)")
#: between a reported error's message and its fields (JSON), which the driver restores
_FIELDS = " |SIRA-FIELDS| "


def translate_failure(err: Exception, node) -> SiraError:
    """A sira error for a Spark failure: arithmetic errors keep their sira class, a file that
    cannot be read is a DataSourceError naming the relvar."""
    from sira.algebra.basic import RelvarRef

    from .session import spark_message
    text = str(err)
    where = _name(node)
    m = _SIRA_RAISED.search(text)
    if m:
        cls = getattr(sira_errors, m.group(1), SiraError)
        message, _, carried = m.group(2).partition(_FIELDS)
        fields = {}
        if carried:  # raised in a Python worker (reported): its fields as they were
            try:
                fields = {k: tuple(v) if isinstance(v, list) else v
                          for k, v in json.loads(carried).items() if k in cls.fields}
            except (ValueError, AttributeError):  # cut short on the way: the message stands
                fields = {}
        op = re.match(r"(\w+): ", message)
        if op and "operator" in cls.fields and fields.get("operator") is None:
            fields["operator"] = op.group(1)
        return cls(f"{message} (in {where} on Spark)", **fields)
    if "FAILED_READ_FILE" in text or "FileNotFoundException" in text:
        relvar = node.name if isinstance(node, RelvarRef) else None
        return DataSourceError(relvar=relvar, source=f"the data of {where}",
                               reason=spark_message(err))
    if "DIVIDE_BY_ZERO" in text or "REMAINDER_BY_ZERO" in text:
        return DivisionByZero(f"{where}: division by zero (on Spark)", operator=where)
    if "ARITHMETIC_OVERFLOW" in text or "CAST_OVERFLOW" in text or "NUMERIC_VALUE_OUT_OF_RANGE" \
            in text:
        return IntOverflow(f"{where}: a value does not fit its type (on Spark)", operator=where)
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    if "OutOfMemoryError" in text or "Java heap space" in text:
        return ExecutionError(f"Spark ran out of memory while running {where} (give the driver "
                              f"and executors more: spark.driver.memory, spark.executor.memory, "
                              f"SparkEngine.local(driver_memory='8g'); or more partitions): "
                              f"{first}", node=where)
    return ExecutionError(f"Spark failed while running {where}: {first}", node=where)
