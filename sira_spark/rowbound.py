"""A bound on the rows of a DataFrame, known without running a job.

A relation handed to Spark as a ``Relation`` (or literal) becomes a DataFrame whose size sira
knows (``remember_rows``), but Spark's optimizer does not (its plan reads an RDD and has no
statistics). :func:`at_most` reads the optimized plan: when every leaf is such a DataFrame
(or ``spark.range``), and every step between them keeps, filters, groups, sorts, unions or
joins rows -- none makes several rows of one (``explode``, Python functions over
partitions) -- the result's rows are bounded step by step from the leaves' (:func:`bound`).
The guards (``max_tuples``) skip their count when that bound is within the limit; the
sequence scans
(``packing._bucketed``) and the CQL ``rows`` windows use it to keep a short sequence in one
bucket without first counting it::

    >>> # engine.dataframe(...) of a 40-tuple Relation: at_most(df, 200_000) is True
"""

from __future__ import annotations

import re

#: steps whose rows are bounded by their inputs' (:func:`bound` says how)
_BOUNDED_STEPS = frozenset({
    "Project", "Filter", "Aggregate", "Join", "Union", "Window", "Sort", "Deduplicate",
    "Distinct", "LocalLimit", "GlobalLimit", "RepartitionByExpression", "Repartition",
    "LocalRelation", "LogicalRDD", "Range", "OneRowRelation", "WindowGroupLimit",
    "InMemoryRelation"})

#: (application, RDD id) -> (rows, whether a persisted DataFrame's count went into them), for
#: the DataFrames sira made from relations it holds and the ones it stored
_KNOWN: dict = {}
_KEEP = 4096  # the most recent conversions remembered


def remember_rows(df, rows: int, cached: bool = False) -> None:
    """Note that ``df`` (made here from driver-side data, or stored) holds ``rows`` rows at
    most; ``cached``: a persisted DataFrame's count went into that number (see :func:`bound`)."""
    try:
        plan = df._jdf.queryExecution().analyzed()
        if plan.getClass().getSimpleName() != "LogicalRDD":
            return
        key = (df.sparkSession.sparkContext.applicationId, int(plan.rdd().id()))
    except Exception:  # noqa: BLE001 - no bound then: the caller counts
        return
    if len(_KNOWN) >= _KEEP:
        _KNOWN.pop(next(iter(_KNOWN)))
    _KNOWN[key] = (rows, cached)


def at_most(df, limit: int) -> bool:
    """Whether ``df`` surely has at most ``limit`` rows, read from its plan (no job); False
    when the plan does not say (a file, a DataFrame from elsewhere, a step making rows)."""
    return limit > 0 and bound(df, limit) is not None


def bound(df, limit: int, cached: bool = True) -> int | None:
    """A number of rows ``df`` surely does not exceed, read from its plan (no job), when it
    is at most ``limit``; None when the plan does not say or the bound is larger.

    The optimized plan's tree is read bottom up: a leaf has the rows sira remembered for it
    (or a range's, a literal's, or, when ``cached``, a persisted DataFrame's once stored: the
    rows Spark's cache counted as it stored them), a join at most the product of its inputs'
    rows + 1, less one (any join type: an outer join keeps each unmatched row once), a semi
    or anti join its left input's, a union the sum of its inputs', an aggregation at most its
    input's and at least one (an aggregation without grouping makes a row of none), every
    other step (a filter, a projection, a sort, a window, a limit...) its input's. A
    ``Generate`` step (an ``explode``) is bounded when it explodes an array written out in the
    plan (``explode(array(a, b))``, as the events of an interval's two ends are made): it
    makes at most that many rows of each row. A relation read several times is counted at
    each read.

    The cache's count is an accumulator: a task that fails after storing its partition, and
    whose retry reads the stored partition, leaves it uncounted. That is good enough to
    choose a plan (how many buckets), not to skip a ``max_tuples`` count, so the guards ask
    with ``cached=False``.

        >>> from sira_spark import default_engine
        >>> none = default_engine().spark.range(0)
        >>> bound(none, 10), bound(none.agg({"id": "count"}), 10)
        (0, 1)
        >>> ten = none.sparkSession.range(10)
        >>> bound(ten.join(ten.groupBy("id").count(), "id"), 1000)
        120
    """
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        lines = [line for line in plan.treeString().splitlines() if line.strip()]
        nodes, persisted = [], None
        for line in lines:
            step = _STEP.match(line)
            depth = len(step.group(1)) // 3
            if persisted is not None and depth > persisted:
                continue  # a persisted DataFrame's stored plan, printed below it: a leaf
            persisted = depth if step.group(2) == "InMemoryRelation" else None
            nodes.append((depth, step.group(2), step.group(3)))
        if not {name for _, name, _ in nodes} <= _BOUNDED_STEPS | {"Generate"}:
            return None
        children = _children(nodes)
        if children is None:
            return None
        app = df.sparkSession.sparkContext.applicationId
        leaves = plan.collectLeaves()
        if leaves.length() != sum(1 for kids in children if not kids):
            return None  # a plan inside an expression (a subquery) printed in the tree
        leaf_rows = [_leaf_rows(leaves.apply(i), app, cached) for i in range(leaves.length())]
        if None in leaf_rows:
            return None
        factors = []
        if any(name == "Generate" for _, name, _ in nodes):
            factors = _generated(plan)
            if factors is None:
                return None
        rows = _rows_of_steps(nodes, children, leaf_rows, factors)
        return rows if rows <= limit else None
    except Exception:  # noqa: BLE001 - the plan could not be read: no bound
        return None


#: a line of a plan's tree: its indentation (3 characters a level), the step, the rest
_STEP = re.compile(r"^([\s:|+\-]*)(\S+)\s*(.*)$")

#: the join types that keep only rows of their left input
_LEFT_ONLY_JOINS = ("LeftSemi", "LeftAnti", "ExistenceJoin")

#: bounds past this are no bound (keeps the numbers small)
_HUGE = 1 << 62


def sequence_join(left, right, on, how: str = "inner"):
    """``left.join(right, on, how)`` by sort-merge, whatever Spark's size estimates say: for
    the joins of sira's own algorithms on a position, or on a key and a number, whose two sides
    may each be as long as the sequence (no key value holds many rows, so the merge spreads
    them evenly). Spark broadcasts a side whose estimated size is under
    ``spark.sql.autoBroadcastJoinThreshold``, and an estimate read from compressed storage (a
    persisted or Parquet input) can be far below the side's rows: WINDOWBY over 1M tuples of a
    persisted input ran the default 1 GB driver out of memory building such a broadcast. A side
    sira knows to be small it broadcasts itself (``F.broadcast``), never through this.

        >>> from sira_spark import default_engine
        >>> ten = default_engine().spark.range(10)
        >>> p = ten.withColumnRenamed("id", "p")
        >>> joined = sequence_join(ten, p, ten["id"] == p["p"])  # unhinted: a broadcast
        >>> plan = joined._jdf.queryExecution().executedPlan().toString()
        >>> joined.count(), "SortMergeJoin" in plan
        (10, True)
    """
    return left.join(right.hint("merge"), on, how)


def _children(nodes) -> list | None:
    """Each node's children (indices), from the nodes' depths in pre-order; None when the
    depths are not a tree (a step printing lines of its own)."""
    children, path = [[] for _ in nodes], []
    for i, (depth, _, _) in enumerate(nodes):
        if depth > len(path) or (i and depth == 0):
            return None
        del path[depth:]
        if path:
            children[path[-1]].append(i)
        path.append(i)
    return children


def _rows_of_steps(nodes, children, leaf_rows, factors) -> int:
    """The bound of the root, each node's from its children's (see :func:`bound`)."""
    # strict: a step without its count (or a count without its step) is no bound (ValueError)
    leaf_of = dict(zip((i for i, kids in enumerate(children) if not kids), leaf_rows,
                       strict=True))
    factor_of = dict(zip((i for i, node in enumerate(nodes) if node[1] == "Generate"), factors,
                         strict=True))
    rows = [0] * len(nodes)
    for i in reversed(range(len(nodes))):
        _, name, rest = nodes[i]
        below = [rows[k] for k in children[i]]
        if not below:
            n = leaf_of[i]
        elif name == "Join" and rest.startswith(_LEFT_ONLY_JOINS):
            n = below[0]
        elif name == "Union":
            n = sum(below)
        else:  # a join (any other type), or a step over one input
            n = 1
            for b in below:
                n *= b + 1
            n -= 1
            if name == "Aggregate":
                n = max(n, 1)
            elif name == "Generate":
                n *= factor_of[i]
        rows[i] = min(n, _HUGE)
    return rows[0]


def _generated(plan) -> list | None:
    """The rows each ``Generate`` step of ``plan`` makes of one row, in pre-order (None: one
    explodes an array of unknown length)."""
    factors, pending = [], [plan]
    while pending:
        node = pending.pop()
        if node.getClass().getSimpleName() == "Generate":
            generator = node.generator()
            if generator.getClass().getSimpleName() not in ("Explode", "PosExplode"):
                return None
            array = generator.child()
            if array.getClass().getSimpleName() != "CreateArray":
                return None
            factors.append(max(1, array.children().length()))
        kids = node.children()
        pending.extend(kids.apply(i) for i in reversed(range(kids.length())))
    return factors


def stored(df, eager: bool = True, rows: int | None = None):
    """``df.localCheckpoint(eager)``, its bound kept for the stored DataFrame, whose plan is a
    scan of what was stored and says nothing of its size: ``rows`` when the caller knows it
    (it counted ``df``, or summed what each row makes), else :func:`bound` (up to
    ``KNOWN_LIMIT``).

        >>> from sira_spark import default_engine
        >>> df = default_engine().spark.range(10)
        >>> at_most(stored(df.where("id > 3")), 10)
        True
        >>> at_most(stored(df.selectExpr("explode(sequence(0, id))"), False, rows=55), 55)
        True
    """
    cached = False
    if rows is None:
        rows = bound(df, KNOWN_LIMIT, cached=False)
        if rows is None:
            rows, cached = bound(df, KNOWN_LIMIT), True
    out = df.localCheckpoint(eager=eager)
    if rows is not None:
        remember_rows(out, rows, cached)
    return out


#: the largest bound :func:`stored` keeps (more than any limit sira asks about)
KNOWN_LIMIT = 1 << 40


def _leaf_rows(leaf, app, cached: bool):
    kind = leaf.getClass().getSimpleName()
    if kind == "LogicalRDD":
        rows, from_cache = _KNOWN.get((app, int(leaf.rdd().id())), (None, False))
        return rows if cached or not from_cache else None
    if kind == "OneRowRelation":
        return 1
    if kind == "InMemoryRelation":  # a persisted DataFrame: once stored, it counted its rows
        if cached and leaf.cacheBuilder().isCachedColumnBuffersLoaded():
            count = leaf.stats().rowCount()
            return int(str(count.get())) if count.isDefined() else None
        return None
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
