"""A bound on the rows of a DataFrame, known without running a job.

A relation handed to Spark as a ``Relation`` (or literal) becomes a DataFrame whose size sira
knows (``remember_rows``), but Spark's optimizer does not (its plan reads an RDD and has no
statistics). :func:`at_most` reads the optimized plan: when every leaf is such a DataFrame
(or ``spark.range``), and every step between them keeps, filters, groups, sorts or joins
rows -- none makes several rows of one (``explode``, Python functions over partitions) --
the result has at most the product of (rows + 1) over the leaves. The sequence scans
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
    if limit <= 0:
        return False
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        steps = {re.sub(r"^[\s:|+\-]*", "", line).split(" ", 1)[0]
                 for line in plan.treeString().splitlines() if line.strip()}
        if not steps <= _BOUNDED_STEPS:
            return False
        app = df.sparkSession.sparkContext.applicationId
        leaves = plan.collectLeaves()
        bound = 1
        for i in range(leaves.length()):
            rows = _leaf_rows(leaves.apply(i), app)
            if rows is None:
                return False
            bound *= rows + 1
            if bound > limit + 1:
                return False
        return True
    except Exception:  # noqa: BLE001 - the plan could not be read: no bound
        return False


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
