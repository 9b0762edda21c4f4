"""A bound on the rows of a DataFrame, known without running a job.

A relation handed to Spark as a ``Relation`` (or literal) becomes a DataFrame whose size sira
knows (``remember_rows``), but Spark's optimizer does not (its plan reads an RDD and has no
statistics). :func:`at_most` reads the optimized plan: when every leaf is such a DataFrame
(or ``spark.range``), and every step between them keeps, filters, groups, sorts or joins
rows -- none makes several rows of one (``explode``, Python functions over partitions) --
the result has at most the product of (rows + 1) over the leaves (doubled for each
aggregation, which makes a row of none when it has no grouping). The guards (``max_tuples``)
skip their count when that bound is within the limit; the sequence scans
(``packing._bucketed``) and the CQL ``rows`` windows use it to keep a short sequence in one
bucket without first counting it::

    >>> # engine.dataframe(...) of a 40-tuple Relation: at_most(df, 200_000) is True
"""

from __future__ import annotations

import re

#: steps whose output has no more rows than the product of their inputs' (rows + 1)
_BOUNDED_STEPS = frozenset({
    "Project", "Filter", "Aggregate", "Join", "Union", "Window", "Sort", "Deduplicate",
    "Distinct", "LocalLimit", "GlobalLimit", "RepartitionByExpression", "Repartition",
    "LocalRelation", "LogicalRDD", "Range", "OneRowRelation", "WindowGroupLimit"})

#: (application, RDD id) -> rows, for the DataFrames sira made from relations it holds
_KNOWN: dict = {}
_KEEP = 4096  # the most recent conversions remembered


def remember_rows(df, rows: int) -> None:
    """Note that ``df`` (made here from driver-side data) holds ``rows`` rows."""
    try:
        plan = df._jdf.queryExecution().analyzed()
        if plan.getClass().getSimpleName() != "LogicalRDD":
            return
        key = (df.sparkSession.sparkContext.applicationId, int(plan.rdd().id()))
    except Exception:  # noqa: BLE001 - no bound then: the caller counts
        return
    if len(_KNOWN) >= _KEEP:
        _KNOWN.pop(next(iter(_KNOWN)))
    _KNOWN[key] = rows


def at_most(df, limit: int) -> bool:
    """Whether ``df`` surely has at most ``limit`` rows, read from its plan (no job); False
    when the plan does not say (a file, a DataFrame from elsewhere, a step making rows)."""
    return limit > 0 and bound(df, limit) is not None


def bound(df, limit: int) -> int | None:
    """A number of rows ``df`` surely does not exceed, read from its plan (no job), when it
    is at most ``limit``; None when the plan does not say or the bound is larger.

    A ``Generate`` step (an ``explode``) is bounded when it explodes an array written out in
    the plan (``explode(array(a, b))``, as the events of an interval's two ends are made): it
    makes at most that many rows of each row. An aggregation without grouping makes one row
    of none, so each ``Aggregate`` step doubles the bound: a step's rows + 1 are at most the
    product of its inputs' rows + 1, and an aggregation's at most twice its input's.

        >>> from sira_spark import default_engine
        >>> none = default_engine().spark.range(0)
        >>> bound(none, 10), bound(none.agg({"id": "count"}), 10)
        (0, 1)
    """
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        steps = [re.sub(r"^[\s:|+\-]*", "", line).split(" ", 1)[0]
                 for line in plan.treeString().splitlines() if line.strip()]
        if not set(steps) <= _BOUNDED_STEPS | {"Generate"}:
            return None
        app = df.sparkSession.sparkContext.applicationId
        total = 2 ** steps.count("Aggregate")
        if total > limit + 1:
            return None
        if "Generate" in steps:
            total = _generated(plan, limit)
            if total is None:
                return None
        leaves = plan.collectLeaves()
        for i in range(leaves.length()):
            rows = _leaf_rows(leaves.apply(i), app)
            if rows is None:
                return None
            total *= rows + 1
            if total > limit + 1:
                return None
        return total - 1
    except Exception:  # noqa: BLE001 - the plan could not be read: no bound
        return None


def _generated(node, limit: int) -> int | None:
    """The product of the rows each ``Generate`` step of the plan ``node`` makes of one row
    (None: one explodes an array of unknown length)."""
    factor = 1
    if node.getClass().getSimpleName() == "Generate":
        generator = node.generator()
        if generator.getClass().getSimpleName() not in ("Explode", "PosExplode"):
            return None
        array = generator.child()
        if array.getClass().getSimpleName() != "CreateArray":
            return None
        factor = max(1, array.children().length())
    children = node.children()
    for i in range(children.length()):
        below = _generated(children.apply(i), limit)
        if below is None or factor * below > limit + 1:
            return None
        factor *= below
    return factor


def stored(df, eager: bool = True):
    """``df.localCheckpoint(eager)``, its bound (:func:`bound`, up to ``KNOWN_LIMIT``) kept
    for the stored DataFrame, whose plan is a scan of what was stored and says nothing of its
    size.

        >>> from sira_spark import default_engine
        >>> df = default_engine().spark.range(10)
        >>> at_most(stored(df.where("id > 3")), 10)
        True
    """
    rows = bound(df, KNOWN_LIMIT)
    out = df.localCheckpoint(eager=eager)
    if rows is not None:
        remember_rows(out, rows)
    return out


#: the largest bound :func:`stored` keeps (more than any limit sira asks about)
KNOWN_LIMIT = 1 << 40


def _leaf_rows(leaf, app):
    kind = leaf.getClass().getSimpleName()
    if kind == "LogicalRDD":
        return _KNOWN.get((app, int(leaf.rdd().id())))
    if kind == "OneRowRelation":
        return 1
    if kind in ("LocalRelation", "Range"):
        count = leaf.stats().rowCount()
        if count.isDefined():
            return int(str(count.get()))
        if kind == "LocalRelation":
            return int(leaf.data().length())
    return None


def partitions_for(df, rows: int | None) -> int:
    """Partitions of about ``ROWS_PER_CHUNK`` (``sira_spark.windowby``) of ``rows`` each (None:
    none), and at least the shuffle partitions of ``df``'s session: what a step that holds a
    partition at once (a hash aggregation, a scan in a Python worker) is given, so that no
    task holds millions of rows.

        >>> from sira_spark import default_engine
        >>> df = default_engine().spark.range(1)
        >>> shuffle = int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))
        >>> partitions_for(df, 10_000_000), partitions_for(df, 1_000) == shuffle
        (40, True)
    """
    from .windowby import ROWS_PER_CHUNK
    parts = int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    return max(1, parts, -(-(rows or 0) // ROWS_PER_CHUNK))
