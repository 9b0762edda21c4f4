"""``max_tuples`` on Spark: every operator the README's Limits name refuses to make more tuples
than the limit, as on the Python engine (``sira.engine.guards``), before its plan runs.

* A JOIN's exact size is known from its keys: each operand's tuples are counted per join key
  (one aggregation over both operands' keys), and the sum of the products is checked before the
  join runs; a cartesian product's size is the product of its operands' counts. The operand
  whose keys hold most of the data is never gathered anywhere.
* Any other such operator (LEFTJOIN, the pointwise split, GROUP, UNGROUP, HOP and CUMULATE,
  RSTREAM) counts its result, or what it nests, with ``limit(max_tuples + 1).count()``: Spark
  stops making tuples past the limit, and an oversized result is refused before the rest of the
  query runs. (TCLOSE and GTCLOSE count after every round, UNPACK before it runs: see their
  modules.)
* SPLWINDOW and WINDOWBY (with a relation-valued result) store their windows
  (``localCheckpoint``, which the rest of the query then reads) and sum the sizes of their
  relations (:func:`check_held`); under a time trigger, whose quiet stretches may hold a
  tuple for any number of ticks, the ticks are summed before they are made
  (:func:`check_held_before`), and that sum is the count (``sira.engine.spl.time_triggered``).
  The scan that ``partitioncount`` and ``tuplecount`` still take counts as it goes, after every
  tuple and tick, in its Python worker (:func:`windows_counted_in_workers`).

    >>> import sira
    >>> r = sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,), (3,)])
    >>> s = sira.Relation.from_rows({"b": sira.INT}, [(1,), (2,), (3,)])
    >>> sira.evaluate("join(R, S)", {"R": r, "S": s}, engine="spark", max_tuples=8)  # doctest: +SKIP
    Traceback (most recent call last):
    ...
    sira.errors.TooManyTuples: JOIN: the result would hold more than 8 tuples (raise max_tuples to allow it)
"""

from __future__ import annotations

import contextlib
import contextvars

from pyspark.sql import functions as F

from sira.engine.guards import Guard, join_is_counted, operator_label, windows_error

from .rowbound import bound

#: (compiler, node) of the translation running now, for checks deep inside shared helpers
_CURRENT = contextvars.ContextVar("sira_spark_guarded", default=None)


@contextlib.contextmanager
def guarding(c, node):
    """Within it, :func:`check_current` checks against ``node``'s guard."""
    token = _CURRENT.set((c, node))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def guard_of(c, node) -> tuple:
    """(guard, making): ``node``'s guard; inside a derived operator Spark lowers (DIVIDEBY) the
    guard names that operator and ``making`` the one inside it, as the Python engine does."""
    guard = Guard.of(node, c.options)
    if c.lowering:
        return Guard(operator_label(c.lowering[-1]), guard.limit), f"its {guard.operator}"
    return guard, None


def check_rows(c, node, df, making: str | None = None) -> int:
    """Refuse ``df`` (made by ``node``) when it holds more than ``max_tuples`` rows; else
    return a number of rows it does not exceed (its plan's bound, or its count)."""
    guard, inside = guard_of(c, node)
    rows = bound(df, guard.limit, cached=False)
    if rows is not None:  # the plan alone shows it (rowbound): no job
        return rows
    with _quiet(c):
        count = df.limit(guard.limit + 1).count()
    guard.check(count, inside or making)
    return count


def check_sizes(c, node, df, sizes) -> None:
    """Refuse ``node``'s result before it is made when the sum over ``df`` of ``sizes`` (the
    result's tuples each row makes, all distinct) is more than ``max_tuples`` (HOP and
    CUMULATE, where a slide far shorter than the size puts one element in billions of
    windows)."""
    guard, inside = guard_of(c, node)
    with _quiet(c):
        total = df.agg(F.sum(sizes.cast("decimal(38,0)"))).first()[0]
    guard.check(total or 0, inside)


def check_current(df, making: str | None = None) -> int | None:
    """:func:`check_rows` against the translation running now (None outside one: nothing
    checked, nothing known)."""
    current = _CURRENT.get()
    return None if current is None else check_rows(*current, df, making)


def check_held(c, node, df, column: str = "tuples"):
    """``df`` (windows made by ``node``), stored; TooManyTuples when its relation-valued
    ``column`` holds more than ``max_tuples`` tuples, all windows together."""
    guard, _ = guard_of(c, node)
    with _quiet(c):
        stored = df.localCheckpoint()
        total = stored.agg(F.sum(F.size(F.col(f"`{column}`")).cast("long"))).first()[0]
    if (total or 0) > guard.limit:
        raise windows_error(guard)
    return stored


@contextlib.contextmanager
def windows_counted_in_workers(c, node):
    """Within it, a scan in a Python worker that refused its windows past ``max_tuples``
    (``sira.engine.spl.SplScanner.guarded``, reported as ``SIRA|TooManyTuples|...``) is
    ``node``'s own TooManyTuples again on the driver, with its limit."""
    try:
        yield
    except Exception as err:  # noqa: BLE001 - a Py4J or Spark error carrying the worker's
        if "SIRA|TooManyTuples|" not in str(err):
            raise
        raise windows_error(guard_of(c, node)[0]) from None


def check_held_before(df, sizes) -> tuple:
    """TooManyTuples for the translation running now when the sum over ``df`` of ``sizes``
    (what each row will put into the windows) is more than ``max_tuples``: the windows'
    tuples counted before they are made, where each row's share is known first (the ticks a
    tuple is in, under a time trigger; a quiet stretch may hold a tuple for more ticks than
    the limit). Returns ``(df stored, that sum)``: the windows are made from the stored rows,
    so the steps before them do not run twice (``(df, None)`` outside a translation: nothing
    counted)."""
    current = _CURRENT.get()
    if current is None:
        return df, None
    c, node = current
    guard, _ = guard_of(c, node)
    with _quiet(c):
        stored = df.localCheckpoint()
        total = int(stored.agg(F.sum(sizes.cast("decimal(38,0)"))).first()[0] or 0)
    if total > guard.limit:
        raise windows_error(guard)
    return stored, total


def check_join(c, node, left, lh, right, rh) -> None:
    """Refuse a natural join of ``left`` and ``right`` whose result would hold more than
    ``max_tuples`` tuples, from the operands' counts per join key: both operands' keys, tagged
    by side, in one aggregation (one shuffle, no join of the counts). No job when the
    operands' plans alone bound them (:mod:`sira_spark.rowbound`: relations sira holds and
    the steps over them) and the product of those bounds is within the limit: a join makes at
    most one row of each pair. None either when one operand's attributes are all the other's
    (a semijoin, not counted: ``sira.engine.guards.join_is_counted``)."""
    if not join_is_counted(lh, rh):
        return
    guard, inside = guard_of(c, node)
    sizes = bound(left, guard.limit, cached=False), bound(right, guard.limit, cached=False)
    if None not in sizes and sizes[0] * sizes[1] <= guard.limit:
        return
    common = [n for n in lh.names if n in rh]
    with _quiet(c):
        if not common:
            size = left.count() * right.count()
        else:
            keys = [F.col(f"`{n}`") for n in common]
            one, zero = F.lit(1).cast("long"), F.lit(0).cast("long")
            tagged = left.select(*keys, one.alias("__l"), zero.alias("__r")).unionByName(
                right.select(*keys, zero.alias("__l"), one.alias("__r")))
            total = tagged.groupBy(*keys).agg(F.sum("__l").alias("__ln"),
                                              F.sum("__r").alias("__rn")).select(
                F.sum(F.col("__ln").cast("decimal(38,0)") * F.col("__rn"))).first()[0]
            size = int(total or 0)
    guard.check(size, inside)


def check_size(c, node, size: int) -> None:
    """Refuse a result of ``node`` whose size, computed before it runs, is over the limit."""
    guard, inside = guard_of(c, node)
    guard.check(size, inside)


def _quiet(c):
    from .compiler import quiet_task_failures
    return quiet_task_failures(c.spark)
