"""DuckDB translations of AGGREGATE and SUMMARIZEBY.

Exact aggregations use DuckDB's own (sum into HUGEINT then a checked cast, max, bool_and...);
FLOAT sums are the exact sum rounded once, from partial sums of exact limbs per bucket of
exponent (:func:`_exact_float_sums`, joined on the group: no group's values gathered in one
list); an integer product multiplies a bounded list of its least factors (:func:`_product`)
and IINTERSECT is the largest begin and least end; the inexact ones (FLOAT products,
AVERAGE) and IUNION fold the group's values in ascending order, exactly as the Python engine
does, so both engines give the same bits (and IUNION fails where it does), with
``list_reduce`` over the ordered list, each step checked as the Python engine checks it. An
empty input gives the operator's identity (or the Python engine's error when it has none).

SUMMARIZEBYUSING on one interval attribute never splits when its aggregates are integer sums, max,
min, and, or, iintersect, products of INTs or LONGs, or integer and FLOAT sums alone: sums alone are
a sweep line (``_swept``; FLOAT sums as exact limbs), the others a segment tree over each group's
elementary segments (``_tree``); both O(n log n + output), however long the intervals.
"""

from __future__ import annotations

from sira.algebra.aggregation import (Aggregate, SummarizeBy, aggregations,
                                      bounded_product)
from sira.algebra.fallible import fallible_attributes
from sira.errors import SiraTypeError
from sira.expressions.evaluate import infer_type
from sira.expressions.library import NO_IDENTITY
from sira.intervals import IntervalType
from sira.types import AVERAGE, FLOAT, INTEGER_TYPES, RelationType

from .basic import computed_on_every_row, guarded
from .compiler import Packed, translates
from .functions import (average_plus, canonical_list, cast, checked_float, expression,
                        interval_union, literal)
from .packing import split
from .sql import DEE, ident, sira_error
from .types import duckdb_type


def _ordered_list(value: str, t) -> str:
    """The group's values as a list in the Python engine's ascending order."""
    if isinstance(t, IntervalType):
        b, e = f'({value})."begin"', f'({value})."end"'
        return f"list({value} ORDER BY {b}, {e} IS NULL, coalesce({e}, {b}))"
    if t == AVERAGE:
        return f'list({value} ORDER BY ({value})."count", ({value})."value")'
    return f"list({value} ORDER BY {value})"


def _float_sum(value: str) -> str:
    """The FLOAT sum of the group's values: their exact sum rounded once
    (:func:`sira.expressions.library.float_sum`, through ``sira_py_float_sum``), the same bits
    as the Python engine whatever order DuckDB gathers them in."""
    return f"sira_py_float_sum(list({value}))"


def _fold(c, values: str, merge, start: str | None = None) -> str:
    acc, x = c.lambda_name(), c.lambda_name()
    tail = "" if start is None else f", {start}"
    return f"list_reduce({values}, lambda {acc}, {x}: {merge(acc, x)}{tail})"


#: a group's product multiplies at most this many of its magnitudes of at least 2: more of
#: them multiply to 2**128 at least, past a HUGEINT (and so past every integer type)
_FACTORS = 128


def _product(c, value: str) -> str:
    """The HUGEINT product of a group's integers ``value``: 0 with a zero among them, whatever
    the others; else the product of the ``_FACTORS`` least magnitudes of at least 2
    (``min(v, n)``: a bounded list, however large the group), signed by how many values are
    negative. The magnitudes multiply as a negative number, so that -2**127 fits; a product
    outside HUGEINT fails as DuckDB's overflow."""
    big = f"abs(CAST(({value}) AS HUGEINT))"
    factors = f"coalesce(min({big}, {_FACTORS}) FILTER (WHERE {big} >= 2), [])"
    negated = _fold(c, factors, lambda a, x: f"{a} * {x}", "CAST(-1 AS HUGEINT)")
    return (f"CASE WHEN bool_or(({value}) = 0) THEN CAST(0 AS HUGEINT) "
            f"WHEN count(*) FILTER (WHERE ({value}) < 0) % 2 = 1 THEN {negated} "
            f"ELSE -{negated} END")


def aggregate_sql(c, agg, value: str, t, grouped: bool) -> str:
    """The aggregate of one spec over the group's rows. ``grouped``: the rows are a group of a
    GROUP BY, never empty, so no identity fallback is needed."""
    op, rt = agg.name, agg.result_type
    if op == "plus" and t in INTEGER_TYPES:
        out = cast(f"sum({value})", rt)
    elif op == "plus" and t == FLOAT:
        out = _float_sum(value)
    elif op == "plus" and t == AVERAGE:
        out = _fold(c, _ordered_list(value, t), lambda a, x: average_plus(a, x, None),
                    literal(AVERAGE, agg.identity))
    elif op == "mult" and t in INTEGER_TYPES:
        out = cast(_product(c, value), rt)
    elif op == "mult" and t == FLOAT:
        out = _fold(c, _ordered_list(value, t),
                    lambda a, x: checked_float(None, "mult", [a, x], lambda p, q: f"{p} * {q}"),
                    literal(FLOAT, 1.0))
    elif op in ("max", "min"):
        out = f"{op}({value})"
    elif op in ("and", "or"):
        out = f"bool_{op}({value})"
    elif op == "iintersect":  # the largest begin and least end: no list, whatever the order
        out = _final(agg, [_combined(f, v) for v, f in _parts(c, agg, value)])
    elif op == "iunion":
        out = _fold(c, _ordered_list(value, t), lambda a, x: interval_union(a, x))
    elif op == "union" and isinstance(t, RelationType):
        out = canonical_list(f"flatten(list({value}))")
    elif op in ("intersect", "join") and isinstance(t, RelationType):
        out = canonical_list(_fold(c, f"list({value})",
                                   lambda a, x: f"list_intersect({a}, {x})"))
    elif op == "xminus" and isinstance(t, RelationType):
        y = c.lambda_name()

        def sym(a, x):
            only_a = f"list_filter({a}, lambda {y}: NOT list_contains({x}, {y}))"
            only_x = f"list_filter({x}, lambda {y}: NOT list_contains({a}, {y}))"
            return f"list_concat({only_a}, {only_x})"
        out = canonical_list(_fold(c, f"list({value})", sym, literal(rt, agg.identity)))
    else:
        raise SiraTypeError(f"{op} cannot aggregate {t} on DuckDB", operator=op,
                            expected="an aggregation", got=str(t))
    if grouped:
        return out
    if agg.identity is NO_IDENTITY:
        fallback = sira_error("SiraValueError", op, f"{op} has no identity value for {rt}, so "
                              f"it cannot aggregate an empty relation")
    else:
        fallback = literal(rt, agg.identity)
    return f"CASE WHEN count(*) = 0 THEN {fallback} ELSE {out} END"


def _specs(node, heading, c, grouped: bool, skip=()) -> list:
    aggs = aggregations(node.specs, heading, node.operator_name)
    return [f"CAST({aggregate_sql(c, a, expression(e, heading, c), infer_type(e, heading), grouped)}"
            f" AS {duckdb_type(a.result_type)}) AS {ident(n)}"
            for j, ((n, _, e), a) in enumerate(zip(node.specs, aggs)) if j not in skip]


def _summary(node, heading, c, source: str, grouped: bool, having: str = "") -> str:
    """The SELECT aggregating ``source`` per value of the node's BY attributes (none: one row;
    ``having``: its HAVING clause) with the node's specs. FLOAT sums come from partial sums of
    their exact limbs per bucket of exponent (:func:`_exact_float_sums`), joined on the group,
    so that no group's values are gathered in one list; the others are DuckDB's aggregates."""
    aggs = aggregations(node.specs, heading, node.operator_name)
    floats = [j for j, a in enumerate(aggs) if a.name == "plus" and a.result_type == FLOAT]
    by = [ident(n) for n in getattr(node, "by", ())]  # (AGGREGATE has none)
    group = f" GROUP BY {', '.join(by)}" if by else ""
    if not floats:
        return f"SELECT {', '.join(by + _specs(node, heading, c, grouped))} FROM {source}" \
               f"{group}{having}"
    rest = _specs(node, heading, c, grouped, floats)
    count = f"count(*) AS {c.helper('n')}"  # (an aggregate: one row when there is no group)
    main = c.define(f"SELECT {', '.join(by + rest + [count])} FROM {source}{group}{having}",
                    "summary")
    sums = _exact_float_sums(node, heading, c, source, by, floats)
    on = " AND ".join(f"m.{k} IS NOT DISTINCT FROM f.{k}" for k in by) or "TRUE"
    names = [f"m.{k}" for k in by] + [
        f"f.{ident(n)}" if j in floats else f"m.{ident(n)}"
        for j, (n, _, _) in enumerate(node.specs)]
    return f"SELECT {', '.join(names)} FROM {main} AS m JOIN {sums} AS f ON {on}"


def _exact_float_sums(node, heading, c, source: str, by: list, floats: list) -> str:
    """One row per value of ``by`` (one row when empty, also for no input) with each FLOAT sum
    of ``floats``: every finite nonzero value cut into its bucket of exponent and exact limb
    (:func:`_float_limbs`), the limbs summed per (group, sum, bucket) and the infinities
    counted, then gathered per group (a few buckets each) and rounded once
    (``sira_py_float_round``)."""
    j_, d_, pi, ni, lst = (c.helper(x) for x in ("j", "d", "pi", "ni", "limbs"))
    ks = ", ".join(by + [""])
    rows = []
    for j in floats:
        x = c.helper(f"x{j}")
        ok = f"isfinite({x}) AND {x} <> 0"
        items, bk, limb = _float_limbs(c, f"(CASE WHEN {ok} THEN {x} ELSE 1.0 END)", str(j))
        valued = f"SELECT {ks}{expression(node.specs[j][2], heading, c)} AS {x} FROM {source}"
        rows.append(f"SELECT {ks}{j} AS {j_}, {', '.join(items)}, "
                    f"CASE WHEN {ok} THEN {bk} ELSE -1 END AS {c.helper('b')}, "
                    f"CASE WHEN {ok} THEN {limb} ELSE CAST(0 AS HUGEINT) END AS {d_}, "
                    f"CAST({x} = CAST('inf' AS DOUBLE) AS BIGINT) AS {pi}, "
                    f"CAST({x} = CAST('-inf' AS DOUBLE) AS BIGINT) AS {ni} "
                    f"FROM ({valued}) AS v{j}")
    b = c.helper("b")
    cols = [f"{k}, " for k in by]
    limbs = c.define(
        f"SELECT {''.join(cols)}{j_}, {b}, sum({d_}) AS {d_}, sum({pi}) AS {pi}, "
        f"sum({ni}) AS {ni} FROM ({' UNION ALL '.join(rows)}) AS lb "
        f"GROUP BY {''.join(cols)}{j_}, {b}", "float_limbs")
    gathered = [f"{_limb_list(j_, b, d_)} FILTER (WHERE {b} >= 0) AS {lst}"]
    for j in floats:
        gathered += [f"coalesce(sum({pi}) FILTER (WHERE {j_} = {j}), 0) AS {c.helper(f'pi{j}')}",
                     f"coalesce(sum({ni}) FILTER (WHERE {j_} = {j}), 0) AS {c.helper(f'ni{j}')}"]
    group = f" GROUP BY {', '.join(by)}" if by else ""
    per_group = c.define(f"SELECT {ks}{', '.join(gathered)} FROM {limbs}{group}", "float_sums")
    values = [f"sira_py_float_round({lst}, {j}, CAST({c.helper(f'pi{j}')} AS BIGINT), "
              f"CAST({c.helper(f'ni{j}')} AS BIGINT)) AS {ident(node.specs[j][0])}"
              for j in floats]
    return c.define(f"SELECT {ks}{', '.join(values)} FROM {per_group}", "float_rounded")


@translates(Aggregate)
def _aggregate(node, children, c):
    (child,) = children
    h = node.source.heading
    source = guarded(child, node.source, [e for _, _, e in node.specs])
    if not node.specs:  # TABLE_DEE, whatever the input holds (still read: its errors count)
        return f"SELECT TRUE AS {DEE} FROM (SELECT count(*) FROM {source}) AS {ident('n')}"
    return computed_on_every_row(_summary(node, h, c, source, False),
                                 fallible_attributes(node))


@translates(SummarizeBy)
def _summarizeby(node, children, c):
    """Every group's aggregates are computed, even those of groups a restriction above drops
    or of attributes nothing reads, when they may fail (see ``sira.algebra.fallible``)."""
    from sira.algebra.derived import float_sums_apart, summarize_by_points
    by_points = summarize_by_points(node)  # a formula reads a USING attribute: the definition
    if by_points is not None:
        return Packed(f"SELECT * FROM {c.compile(by_points)}")
    apart = float_sums_apart(node, _TREED)  # FLOAT sums by the sweep, the rest by the tree
    if apart is not None:
        return Packed(f"SELECT * FROM {c.compile(apart)}")
    swept = _swept(node, children, c)
    if swept is not None:
        return Packed(computed_on_every_row(swept, fallible_attributes(node)))
    return computed_on_every_row(_summarized(node, children, c), fallible_attributes(node))


def _swept(node, children, c):
    """SUMMARIZEBYUSING on one interval attribute with sums only (``plus`` of an integer or a
    FLOAT, counts), by a sweep line instead of the elementary-segment split, or None.

    Pointwise, a sum is over the distinct tuples present at a point: the source is packed on
    the interval first (one PACK, unless it is packed by construction, as a CQL window is: a
    rest's intervals then neither overlap nor meet, so each distinct rest is present at a point
    at most once); every packed interval is a begin event (+1, +value) and an end event (-1,
    -value), both made from one read of its row; summed per (group, point), one window per group
    ordered by point gives the running count and sums and the next point, so [point, next)
    holds them where the count is positive; consecutive segments that meet with equal sums are
    one island (a running count of breaks), one tuple each: packed. A FLOAT sum runs exactly:
    its infinities as counts, its finite values as integer limbs (:func:`_float_limbs`), rounded
    once per segment as ``float_sum`` rounds. Sorts and hash aggregations only: O(n log n +
    output), however long the intervals (the split costs their overlaps)."""
    from sira.algebra.aggregation import sweepable
    from .packing import begin_of, end_of, nonempty, packed_source
    swept = sweepable(node, _TREED, floats=True)
    if swept is None:
        return None
    during, aggs = swept
    h = node.source.heading
    floats = [j for j, a in enumerate(aggs) if a.result_type == FLOAT]
    if any(a.name == "mult" and not bounded_product(a) for a in aggs):
        return None  # a FLOAT or BIGINT product: the split
    if any(a.name != "plus" for a in aggs):
        if floats:
            return None
        return _rows_framed(node, c, aggs) or _tree(node, children, c, aggs)
    (child,) = children
    source = guarded(child, node.source, [e for _, _, e in node.specs])
    if source != child:
        source = c.define(f"SELECT * FROM {source}", "guarded")
    packed = packed_source(c, source, node.source, during, materialized=bool(floats))
    keys = [ident(n) for n in node.by if n != during]
    p, q, cnt = (c.helper(x) for x in ("p", "q", "cnt"))
    values = [expression(e, h, c) for _, _, e in node.specs]
    base, scales = packed, None
    if floats:  # each FLOAT value once, beside its group's scale (_float_scales)
        base, scales, valued = _float_scales(c, packed, keys, values, floats)
    sums, ups = [], []  # the running columns, and their values at a begin event
    for j, v in enumerate(values):
        if j in floats:  # the infinities, counted; the finite values as one exact integer
            x, low, fits = (c.helper(f"{y}{j}") for y in ("x", "u", "fits"))
            sums += [c.helper(f"inf{j}"), c.helper(f"f{j}")]
            # both counts of infinities in one sum: +inf below bit 62, -inf above it. Every
            # running count is of intervals open at a point, at least 0 and below 2**62, so
            # the running sum holds both apart (_float_segments takes them out again)
            ups += [f"(CAST({x} = CAST('inf' AS DOUBLE) AS HUGEINT) + "
                    f"CAST({x} = CAST('-inf' AS DOUBLE) AS HUGEINT) * {_INF_APART})",
                    f"CASE WHEN {fits} AND isfinite({x}) AND {x} <> 0 THEN "
                    f"{_scaled_to(x, low)} ELSE CAST(0 AS HUGEINT) END"]
        else:
            sums.append(c.helper(f"s{j}"))
            ups.append(f"CAST({v} AS HUGEINT)")
    # each row read once for both its events: its begin (sign 1) and its end (sign -1). The
    # count runs as a DOUBLE (DuckDB sums an integer as a HUGEINT, a lane that cost a FLOAT sum
    # a tenth of its time at 1M): every sum of consecutive events is an integer of magnitude at
    # most the rows read, exact below 2**53
    sg = c.helper("sg")
    signed = [f"{sg} * {u} AS {x}" for u, x in zip(ups, sums)]
    at = f"CASE WHEN {sg} = 1 THEN {begin_of(during)} ELSE {end_of(during)} END AS {p}"
    counted = f"CAST({sg} AS DOUBLE) AS {cnt}"
    events = (f"SELECT {', '.join(keys + [at, counted] + signed)} FROM {base} "
              f"CROSS JOIN (VALUES (1), (-1)) AS signs({sg}) WHERE {nonempty(during)} "
              f"AND ({sg} = 1 OR {end_of(during)} IS NOT NULL)")
    total = ", ".join(f"sum({x}) AS {x}" for x in [cnt] + sums)
    points = c.define(f"SELECT {', '.join(keys + [p, total])} FROM ({events}) AS ev "
                      f"GROUP BY {', '.join(keys + [p])}", "points", materialized=bool(floats))
    part = f"PARTITION BY {', '.join(keys)} " if keys else ""
    w = f"({part}ORDER BY {p}"
    run = f"{w} ROWS UNBOUNDED PRECEDING)"
    running = ", ".join(f"sum({x}) OVER {run} AS {x}" for x in [cnt] + sums)
    segments = c.define(f"SELECT {', '.join(keys + [p])}, lead({p}) OVER {w}) AS {q}, "
                        f"{running} FROM {points}", "segments")
    outs = sums
    if floats:
        segments, outs = _float_segments(c, node, aggs, floats, valued, scales, points,
                                         segments, keys, p, cnt)
    same = " AND ".join([f"lag({q}) OVER {w}) = {p}"] +
                        [f"lag({x}) OVER {w}) = {x}" for x in outs])
    return _islands(node, aggs, c, f"{segments} WHERE {cnt} > 0", keys, w, same, p, q, outs)


#: the counts of +inf and -inf of a FLOAT sum held in one HUGEINT sum: +inf's below it, -inf's
#: times it (each running count is below 2**62)
_INF_APART = "CAST(4611686018427387904 AS HUGEINT)"


def _float_limbs(c, value: str, tag: str = ""):
    """``(items, bucket, limb)`` for a finite, nonzero DOUBLE ``value``: SELECT items naming
    the bucket (``bucket``, read by ``limb`` as a lateral alias) and the limb's SQL. ``value``
    is exactly ``limb * 2**(32 * bucket - 1074)``, the limb an integer below 2**85 in magnitude
    (a HUGEINT sums 2**42 of them). The bucket is set by the value's exponent ``e`` (its last
    bit is ``2**max(e - 52, -1074)``): ``max(e + 1022, 0) // 32``, 0 to 63. ``e`` is ``log2``
    rounded down and corrected by the powers of two around it (exact in a DOUBLE), and the
    scaling by ``2**(1074 - 32 * bucket)`` is two exact multiplications by a power of two (no
    product leaves the normal DOUBLEs)."""
    e0, e, bk = c.helper(f"e0{tag}"), c.helper(f"e{tag}"), c.helper("bk")
    x = f"abs({value})"
    items = [f"CAST(floor(log2({x})) AS INTEGER) AS {e0}",
             f"{e0} - CAST(pow(2.0, {e0}) > {x} AS INTEGER) "
             f"+ CAST(pow(2.0, {e0} + 1) <= {x} AS INTEGER) AS {e}",
             f"CAST(greatest({e} + 1022, 0) // 32 AS INTEGER) AS {bk}"]
    half = f"pow(2.0, 537 - 16 * {bk})"
    return items, bk, f"CAST({value} * {half} * {half} AS HUGEINT)"


def _limb_list(which: str, bucket: str, limb: str) -> str:
    """The aggregate list of (sum, bucket, limb) that ``sira_py_float_round`` reads, each
    HUGEINT limb as its high BIGINT and low UBIGINT halves (exact through Arrow)."""
    return (f"list(struct_pack(j := {which}, b := {bucket}, hi := CAST({limb} >> 64 AS BIGINT), "
            f"lo := CAST({limb} & CAST(18446744073709551615 AS HUGEINT) AS UBIGINT)))")


def _float_scales(c, packed, keys, values, floats):
    """``(base, scales)``: the packed rows with each FLOAT sum's value ``x<j>`` computed once
    and their group's scale beside it, and the scales per group. A group's scale for sum j is
    the least exponent ``u<j>`` of the last bits of its finite, nonzero values; the group
    ``fits<j>`` when every such value is an integer times 2**u below 2**(124 - bits of twice
    its row count), so that any sum of them at a point, and every running sum, is an exact
    HUGEINT below 2**124 (:func:`_scaled_to`, :func:`_rounded_from`). Ordinary data fits
    (values from 1e-3 to 1e6 span about 85 bits with their 53); a group that does not is
    summed by buckets of exponent instead (:func:`_float_segments`)."""
    ks = ", ".join(keys + [""])
    n = c.helper("n")
    exps, stats, scale_cols = [], [f"count(*) AS {n}"], []
    for j in floats:
        x, e, low, top, fits = (c.helper(f"{y}{j}") for y in ("x", "e", "u", "top", "fits"))
        ok = f"isfinite({x}) AND {x} <> 0"
        items, _, _ = _float_limbs(c, f"(CASE WHEN {ok} THEN {x} ELSE 1.0 END)", str(j))
        exps.append((j, x, items, e))
        stats += [f"min(greatest({e} - 52, -1074)) FILTER (WHERE {ok}) AS {low}",
                  f"max({e}) FILTER (WHERE {ok}) AS {top}"]
        scale_cols += [low, f"coalesce({top} + 1 - {low} + CAST(ceil(log2(2 * {n} + 1)) AS "
                            f"INTEGER) <= 123, TRUE) AS {fits}"]
    valued = c.define(
        f"SELECT *, {', '.join(f'{values[j]} AS {x}' for j, x, _, _ in exps)} FROM {packed}",
        "valued", materialized=True)
    exponents = ", ".join(item for _, _, items, _ in exps for item in items[:2])
    per_row = f"(SELECT *, {exponents} FROM {valued})"
    grouped = f" GROUP BY {', '.join(keys)}" if keys else ""
    scales = c.define(f"SELECT {ks}{', '.join(stats)} FROM {per_row} AS pr{grouped}",
                      "float_scales")
    scales = c.define(f"SELECT {ks}{', '.join(scale_cols)} FROM {scales}", "scales",
                      materialized=True)
    on = " AND ".join(f"v.{k} = sc.{k}" for k in keys) or "TRUE"
    picked = ", ".join(col.rsplit(" AS ", 1)[-1] for col in scale_cols)
    base = c.define(f"SELECT v.*, {', '.join(f'sc.{x}' for x in picked.split(', '))} "
                    f"FROM {valued} AS v JOIN {scales} AS sc ON {on}", "scaled")
    return base, scales, valued


def _scaled_to(x: str, low: str) -> str:
    """The DOUBLE ``x`` times 2**-``low`` as a HUGEINT (exact: ``x`` is an integer times 2**low
    below 2**124 times it): three exact multiplications by powers of two, ``2**-(low + 124)``
    in two halves and then ``2**124``, each product a normal DOUBLE."""
    k1 = f"((-{low} - 124) // 2)"
    k2 = f"(-{low} - 124 - {k1})"
    return f"CAST({x} * pow(2.0, {k1}) * pow(2.0, {k2}) * pow(2.0, 124) AS HUGEINT)"


def _rounded_from(c, total: str, low: str, pos: str, neg: str, tag: str):
    """``(items, value)``: the FLOAT sum of a group that fits (:func:`_float_scales`),
    ``total * 2**low`` rounded once to the nearest DOUBLE, ties to even (``float_sum``'s bits),
    by integer arithmetic on the HUGEINT ``total``: SELECT items (lateral aliases, suffixed
    ``tag``) for its bit length ``L`` (``log2`` corrected by exact shifts), its top 53 bits and
    the rest below them, and the value's SQL: the top bits rounded on the rest, then two exact
    scalings; the counts of infinities first; an infinite result is FloatOverflow."""
    a, l0, bits, sh, kept, rest, half = (c.helper(f"{y}{tag}") for y in (
        "a", "l0", "bits", "sh", "kept", "rest", "half"))
    items = [f"abs({total}) AS {a}",
             f"CASE WHEN {a} = 0 THEN 1 ELSE CAST(floor(log2(CAST({a} AS DOUBLE))) AS INTEGER)"
             f" + 1 END AS {l0}",
             f"{l0} - CAST((CAST(1 AS HUGEINT) << ({l0} - 1)) > {a} AS INTEGER) "
             f"+ CAST((CAST(1 AS HUGEINT) << {l0}) <= {a} AS INTEGER) AS {bits}",
             f"greatest({bits} - 53, 0) AS {sh}",
             f"{a} >> {sh} AS {kept}",
             f"{a} - ({kept} << {sh}) AS {rest}",
             f"(CAST(1 AS HUGEINT) << {sh}) >> 1 AS {half}"]
    up = f"CAST({rest} > {half} OR ({rest} = {half} AND {sh} > 0 AND {kept} % 2 = 1) AS HUGEINT)"
    magnitude = f"(CAST({kept} + {up} AS DOUBLE) * pow(2.0, {sh}) * pow(2.0, {low}))"
    value = f"(CASE WHEN {total} < 0 THEN -{magnitude} ELSE {magnitude} END)"
    nan = sira_error("SiraValueError", "plus", "plus: the result is not a number")
    overflow = sira_error("FloatOverflow", "plus", "plus: the result is too large for a FLOAT")
    return items, (f"(CASE WHEN {pos} > 0 AND {neg} > 0 THEN {nan} "
                   f"WHEN {pos} > 0 THEN CAST('inf' AS DOUBLE) "
                   f"WHEN {neg} > 0 THEN CAST('-inf' AS DOUBLE) "
                   f"WHEN {total} = 0 THEN CAST(0.0 AS DOUBLE) "
                   f"WHEN isinf({value}) THEN {overflow} ELSE {value} + 0.0 END)")


def _float_segments(c, node, aggs, floats, valued, scales, points, segments, keys, p, cnt):
    """The segments with each FLOAT sum's value. A group that fits (:func:`_float_scales`)
    ran its finite values as one exact integer beside the other sums: rounded here in SQL
    (:func:`_rounded_from`). One that does not runs them per (sum, bucket of exponent) at
    every point of the group (:func:`_float_limbs`), gathered per point and rounded once by
    ``sira_py_float_round`` (:func:`sira.expressions.library.rounded_float`) with the running
    counts of infinities: rows the group's points times its (sum, bucket) lanes, the buckets
    its values use being few (one per factor 2**32 of their range). Only the groups that do
    not fit are read for their limbs (the values joined to those groups' keys: nothing to
    read, and no condition to test on every row, where every group fits)."""
    from .packing import begin_of, end_of, nonempty
    j_, d_, s_, lst, bk = (c.helper(x) for x in ("j", "d", "s", "limbs", "bk"))
    (during,) = node.using
    ks = ", ".join(keys + [""])
    rows = []
    for j in floats:
        x, fits = c.helper(f"x{j}"), c.helper(f"fits{j}")
        items, bk, limb = _float_limbs(c, x)
        unfit = (f"(SELECT {ks}TRUE AS {fits} FROM {scales} WHERE NOT {fits}) AS sc "
                 f"ON {' AND '.join(f'v.{k} = sc.{k}' for k in keys) or 'TRUE'}")
        for at, sign, when in ((begin_of(during), "", ""),
                               (end_of(during), "-", f" AND {end_of(during)} IS NOT NULL")):
            finite = (f"SELECT {''.join(f'v.{k}, ' for k in keys)}{at} AS {p}, {x} "
                      f"FROM {valued} AS v JOIN {unfit} WHERE {nonempty(during)}{when}")
            rows.append(f"SELECT {ks}{p}, {j} AS {j_}, {', '.join(items)}, {sign}{limb} AS {d_} "
                        f"FROM ({finite}) AS fv WHERE isfinite({x}) AND {x} <> 0")
    limbs = c.define(f"SELECT {ks}{j_}, {bk}, {p}, sum({d_}) AS {d_} FROM "
                     f"({' UNION ALL '.join(rows)}) AS lb GROUP BY {ks}{j_}, {bk}, {p}",
                     "limbs", materialized=True)
    on = "".join(f"l.{k} = t.{k} AND " for k in keys)
    lanes = f"(SELECT DISTINCT {ks}{j_}, {bk} FROM {limbs})"
    grid = (f"SELECT {''.join(f'l.{k}, ' for k in keys)}l.{j_}, l.{bk}, t.{p} "
            f"FROM {lanes} AS l JOIN {points} AS t ON {on}TRUE")
    on_grid = "".join(f"g.{k} = m.{k} AND " for k in keys)
    lane = ", ".join([f"g.{k}" for k in keys] + [f"g.{j_}", f"g.{bk}"])
    run = (f"SELECT {''.join(f'g.{k}, ' for k in keys)}g.{p}, g.{j_}, g.{bk}, "
           f"sum(coalesce(m.{d_}, 0)) OVER (PARTITION BY {lane} ORDER BY g.{p} "
           f"ROWS UNBOUNDED PRECEDING) AS {s_} FROM ({grid}) AS g LEFT JOIN {limbs} AS m "
           f"ON {on_grid}g.{j_} = m.{j_} AND g.{bk} = m.{bk} AND g.{p} = m.{p}")
    gathered = c.define(
        f"SELECT {ks}{p}, {_limb_list(j_, bk, s_)} AS {lst} FROM ({run}) AS r "
        f"WHERE {s_} <> 0 GROUP BY {ks}{p}", "gathered")
    outs, stages, picked = [], [], []
    for j, a in enumerate(aggs):
        if j in floats:
            o = c.helper(f"o{j}")
            pos, neg, fast = (c.helper(f"{y}{j}") for y in ("pi", "ni", "f"))
            low, fits, inf = c.helper(f"u{j}"), c.helper(f"fits{j}"), c.helper(f"inf{j}")
            items, value = _rounded_from(c, fast, low, pos, neg, str(j))
            stages += [f"{inf} % {_INF_APART} AS {pos}", f"{inf} // {_INF_APART} AS {neg}",
                       *items]
            picked.append(
                f"CASE WHEN {cnt} <= 0 THEN NULL WHEN {fits} THEN {value} "
                f"ELSE sira_py_float_round({lst}, {j}, CAST({pos} AS BIGINT), "
                f"CAST({neg} AS BIGINT)) END AS {o}")
            outs.append(o)
        else:
            outs.append(c.helper(f"s{j}"))
    on_seg = "".join(f"sg.{k} = gl.{k} AND " for k in keys)
    on_scale = " AND ".join(f"sg.{k} = sc.{k}" for k in keys) or "TRUE"
    scale_cols = ", ".join(f"sc.{c.helper(f'{y}{j}')}" for j in floats for y in ("u", "fits"))
    joined = c.define(f"SELECT sg.*, {scale_cols}, gl.{lst} FROM {segments} AS sg "
                      f"JOIN {scales} AS sc ON {on_scale} "
                      f"LEFT JOIN {gathered} AS gl ON {on_seg}sg.{p} = gl.{p}", "joined")
    staged = c.define(f"SELECT *, {', '.join(stages)} FROM {joined}", "staged")
    return c.define(f"SELECT *, {', '.join(picked)} FROM {staged}", "rounded"), outs


def _islands(node, aggs, c, rows, keys, w, same, p, q, values) -> str:
    """The packed result of a sweep over elementary segments: the segments of ``rows`` (a
    FROM clause; each with its begin ``p``, its end ``q`` (NULL: unbounded) and its aggregate
    columns ``values``) that meet their predecessor in the window ``w`` with equal values
    (``same``) are one island, one tuple each. One window marks the segments that start an
    island and gives each segment its predecessor's end; only starts are kept, and an island
    ends where the segment before the next start ends (a ``lead`` over the starts alone), the
    last one where its group's last segment ends (no running count of islands, no GROUP
    BY)."""
    from .functions import interval as interval_sql
    st, pq, lq = c.helper("st"), c.helper("pq"), c.helper("lq")
    marked = (f"SELECT *, CASE WHEN {same} THEN FALSE ELSE TRUE END AS {st}, "
              f"lag({q}) OVER {w}) AS {pq}, last_value({q}) OVER {w} ROWS BETWEEN UNBOUNDED "
              f"PRECEDING AND UNBOUNDED FOLLOWING) AS {lq} FROM {rows}")
    end = f"coalesce(lead({pq}) OVER {w}), {lq})"
    (during,) = node.using
    picked = keys + [f"{interval_sql(p, end)} AS {ident(during)}"] + [
        f"{cast(v, a.result_type)} AS {ident(n)}" for v, a, (n, _, _) in zip(values, aggs,
                                                                          node.specs)]
    return f"SELECT {', '.join(picked)} FROM ({marked}) AS mk WHERE {st}"


#: what the segment tree combines: node value -> segment value (integer sums over distinct rests)
_TREE = {"plus": "sum", "max": "max", "min": "min", "and": "bool_and", "or": "bool_or"}

#: the aggregations the segment tree takes: those of ``_TREE``, and IINTERSECT and a product
#: of INTs or LONGs as parts
_TREED = frozenset(_TREE) | {"iintersect", "mult"}

#: 2**63 + 1, more than the magnitude of any INT or LONG: the segment tree's products of
#: magnitudes stop there (two such multiply below 2**127, inside a HUGEINT)
_PRODUCT_CAP = "CAST(9223372036854775809 AS HUGEINT)"


def _combined(combine, value: str) -> str:
    """A part's combining aggregate over ``value``: a function name, or a callable making the
    SQL (the capped product of :func:`_parts`)."""
    return combine(value) if callable(combine) else f"{combine}({value})"


def _tree(node, children, c, aggs):
    """SUMMARIZEBYUSING on one interval attribute with max, min, and, or, iintersect, a product
    of INTs or LONGs (and integer sums) beside them, by a segment tree over each group's
    elementary segments.

    The source is packed on the interval (each distinct rest then covers a point at most
    once). Each group's distinct boundaries are numbered 0..m-1: elementary segment ``s`` is
    [boundary s, boundary s+1) (the last one unbounded above), and an interval covers the
    segments [rank of its begin, rank of its end) (m for an open end). That range is cut into
    its canonical dyadic blocks, at most two per level (level j, index x: segments
    [x * 2^j, (x + 1) * 2^j)), so every segment it covers lies in exactly one of them; each
    block aggregates the values of the intervals cut into it (a hash aggregation; IINTERSECT
    as its parts, :func:`_parts`). A segment's aggregate combines the blocks on its path,
    (j, s >> j) for every level j up to the highest holding a block (short intervals fill the
    lowest levels alone), found by an equi-join; segments with no block are covered
    by nothing and give no tuple. Segments that meet with equal aggregates are one island
    (:func:`_islands`), one tuple each: packed. O(n log n + output) rows, sorts, hash
    joins and hash aggregations only, however long the intervals (the split costs their
    overlaps)."""
    from .packing import begin_of, end_of, packed_source
    from .sql import field
    (during,) = node.using
    h = node.source.heading
    (child,) = children
    source = guarded(child, node.source, [e for _, _, e in node.specs])
    if source != child:
        source = c.define(f"SELECT * FROM {source}", "guarded")
    packed = packed_source(c, source, node.source, during, materialized=True)
    keys = [ident(n) for n in node.by if n != during]
    p, i, m, lo, hi, j, x, s, q = (c.helper(y) for y in (
        "p", "i", "m", "lo", "hi", "j", "x", "s", "q"))
    parts = [_parts(c, a, expression(e, h, c)) for a, (_, _, e) in zip(aggs, node.specs)]
    vals = [c.helper(f"v{k}") for k in range(sum(len(x) for x in parts))]
    combine = [f for x in parts for _, f in x]
    part = f"PARTITION BY {', '.join(keys)} " if keys else ""
    ks = ", ".join(keys + [""])  # the keys, each followed by a comma
    points = (f"SELECT {ks}{begin_of(during)} AS {p} FROM {packed} UNION "
              f"SELECT {ks}{end_of(during)} AS {p} FROM {packed} "
              f"WHERE {end_of(during)} IS NOT NULL")
    # each boundary numbered, with the next one (the end of the segment it begins)
    ranks = c.define(f"SELECT {ks}{p}, row_number() OVER ({part}ORDER BY {p}) - 1 AS {i}, "
                     f"lead({p}) OVER ({part}ORDER BY {p}) AS {q}, "
                     f"count(*) OVER ({part.strip()}) AS {m} FROM ({points}) AS pt",
                     "ranks", materialized=True)

    def on(a, b):
        return "".join(f"{a}.{k} = {b}.{k} AND " for k in keys)
    # the values are computed on the packed rows alone: a formula may read a BY attribute,
    # which the ranks joined below hold too (an ambiguous name in the join)
    values = [f"{sql} AS {v}" for (sql, _), v in zip((y for x in parts for y in x), vals)]
    valued = f"(SELECT *, {', '.join(values)} FROM {packed})"
    ranged = c.define(
        f"SELECT {''.join(f'r.{k}, ' for k in keys)}rb.{i} AS {lo}, "
        f"coalesce(re.{i}, rb.{m}) AS {hi}, {', '.join(f'r.{v}' for v in vals)} "
        f"FROM {valued} AS r JOIN {ranks} AS rb ON {on('r', 'rb')}rb.{p} = "
        f"{field(f'r.{ident(during)}', 'begin')} "
        f"LEFT JOIN {ranks} AS re ON {on('r', 're')}re.{p} = "
        f"{field(f'r.{ident(during)}', 'end')}", "ranged")
    # level j keeps the blocks [ceil(lo / 2^j), floor(hi / 2^j)) not kept by a level above:
    # the first when its index is odd, the last when the end index is odd
    levels = (f"SELECT *, ({lo} + (CAST(1 AS BIGINT) << {j}) - 1) >> {j} AS {x}, "
              f"{hi} >> {j} AS {s} FROM (SELECT *, unnest(range(0, CAST(floor(log2({hi} - {lo}))"
              f" AS BIGINT) + 2)) AS {j} FROM {ranged}) AS lv")
    cut = c.define(levels, "levels")
    blocks = (f"SELECT {ks}{j}, {x}, {', '.join(vals)} FROM {cut} "
              f"WHERE {x} < {s} AND {x} % 2 = 1 UNION ALL "
              f"SELECT {ks}{j}, {s} - 1 AS {x}, {', '.join(vals)} FROM {cut} "
              f"WHERE {x} < {s} AND {s} % 2 = 1")
    tree = c.define(f"SELECT {ks}{j}, {x}, "
                    f"{', '.join(f'{_combined(f, v)} AS {v}' for f, v in zip(combine, vals))} "
                    f"FROM ({blocks}) AS bl GROUP BY {ks}{j}, {x}", "tree")
    # every segment with its path up the tree: levels 0 .. bit length of m, and no higher
    # than the highest level holding a block (short intervals fill the lowest levels alone)
    top = f"(SELECT max({j}) + 1 FROM {tree})"
    paths = (f"SELECT {ks}{i}, {p}, {q}, unnest(range(0, "
             f"least(CAST(floor(log2({m})) AS BIGINT) + 2, {top}))) AS {j} FROM {ranks}")
    on_path = ", ".join(f"{_combined(f, 't.' + v)} AS {v}" for f, v in zip(combine, vals))
    segs = c.define(
        f"SELECT {''.join(f'g.{k}, ' for k in keys)}g.{i}, any_value(g.{p}) AS {p}, "
        f"any_value(g.{q}) AS {q}, {on_path} "
        f"FROM ({paths}) AS g JOIN {tree} AS t ON {on('g', 't')}t.{j} = g.{j} "
        f"AND t.{x} = g.{i} >> g.{j} GROUP BY {''.join(f'g.{k}, ' for k in keys)}g.{i}",
        "segments")
    outs = [c.helper(f"o{k}") for k in range(len(aggs))]
    at, finals = 0, []
    for a, kept, o in zip(aggs, parts, outs):
        finals.append(f"{_final(a, vals[at:at + len(kept)])} AS {o}")
        at += len(kept)
    segs = c.define(f"SELECT {ks}{i}, {p}, {q}, {', '.join(finals)} FROM {segs}", "finals")
    w = f"({part}ORDER BY {i}"
    same = " AND ".join([f"lag({i}) OVER {w}) = {i} - 1"] +
                        [f"lag({o}) OVER {w}) = {o}" for o in outs])
    return _islands(node, aggs, c, segs, keys, w, same, p, q, outs)


def _rows_framed(node, c, aggs):
    """SUMMARIZEBYUSING straight over a CQL ``rows(N)`` window (partitioned or not, no range,
    no slide), BY its partition and its period, with integer sums, max, min, and, or: each
    aggregate is DuckDB's own over a frame of N rows, or None (another plan).

    Within a partition ordered as the window orders its elements (timestamp, then arrival or
    the canonical order), element i is in the window over [t(i), t(i+N)). From a time T on,
    until the partition's next time, the window holds the elements at positions L-N+1 .. L,
    L the last position at T: one at i <= L-N left at t(i+N) <= T, and one at i > L-N stays
    past T (an element the N-th next of which comes at its own time never enters, and never
    falls in such a frame). So each aggregate over ``ROWS BETWEEN N-1 PRECEDING AND CURRENT
    ROW`` at the last element of each time is that segment's, the segment ending at the next
    time (none: unbounded), and the segments that meet with equal aggregates are one island
    (:func:`_islands`). One sort of the stream and a window over its times; the formulas are
    computed on every element, so none may fail (else the segment tree, over the window's
    visible elements).

        >>> import sira
        >>> s = sira.Relation.from_rows({"ts": sira.INT, "v": sira.INT},
        ...                             [(1, 5), (2, 3), (2, 9), (4, 1)])
        >>> print(sira.evaluate("summarizebyusing(window(s, ts, rows(2)), (during), "
        ...                     "(m(max(v))), (during))", {"s": s}, engine="duckdb"))
        +----------------+-----+
        | DURING         | M   |
        | INTINTERVAL    | INT |
        +----------------+-----+
        | BEGIN(1)END(2) | 5   |
        | BEGIN(2)END()  | 9   |
        +----------------+-----+
        2 tuples
    """
    from sira.algebra.fallible import may_fail
    from sira.algebra.windows import Window
    from .windows import element_order, from_time, to_time
    win = node.source
    if not isinstance(win, Window):
        return None
    spec = win.spec
    if (spec.kind != "rows" or spec.rows is None or spec.rows < 1 or spec.slide_rows is not None
            or win.range_units is not None or win.slide_units is not None
            or set(node.by) != set(spec.partition) | {win.during}
            or any(a.name not in _TREE for a in aggs)
            or any(may_fail(e) for _, _, e in node.specs)):
        return None
    source = c.compile(win.source)
    h = win.source.heading
    part, order = element_order(c, source, win)
    w = f"({part}ORDER BY {', '.join(order)}"
    frame = f"{w} ROWS BETWEEN {spec.rows - 1} PRECEDING AND CURRENT ROW)"
    keys = [ident(n) for n in spec.partition]
    p, q, nxt, ts = c.helper("p"), c.helper("q"), c.helper("next"), c.helper("ts")
    outs = [c.helper(f"o{k}") for k in range(len(aggs))]
    ts_t = h.type_of(win.ts)
    values = [expression(e, h, c) for _, _, e in node.specs]
    values = [f"CAST({v} AS HUGEINT)" if a.name == "plus" else v for a, v in zip(aggs, values)]
    framed = ", ".join(f"{_TREE[a.name]}({v}) OVER {frame} AS {o}"
                       for a, v, o in zip(aggs, values, outs))
    at = from_time(to_time(ident(win.ts), ts_t), ts_t)
    rows = (f"SELECT {', '.join(keys + [f'{at} AS {p}'])}, lead({ident(win.ts)}) OVER {w}) "
            f"AS {nxt}, {ident(win.ts)} AS {ts}, {framed} FROM {source}")
    last = f"{nxt} IS NULL OR {nxt} <> {ts}"  # the last element at its time
    pw = f"({part}ORDER BY {p}"
    segments = c.define(f"SELECT {', '.join(keys + [p])}, lead({p}) OVER {pw}) AS {q}, "
                        f"{', '.join(outs)} FROM ({rows}) AS fr WHERE {last}", "framed")
    same = " AND ".join([f"lag({q}) OVER {pw}) = {p}"] +
                        [f"lag({o}) OVER {pw}) = {o}" for o in outs])
    return _islands(node, aggs, c, segments, keys, pw, same, p, q, outs)


def _parts(c, agg, value: str) -> list:
    """What the segment tree keeps of one aggregate's value: (SQL, combining aggregate)
    pairs. IINTERSECT keeps the largest begin and least end of the non-empty intervals (an
    unbounded end is NULL, which ``min`` passes over) and whether an empty one is among them.
    A product of INTs or LONGs keeps how many values are zero and how many negative, and the
    product of the magnitudes of the others capped at ``_PRODUCT_CAP`` (past it the product
    fits no INT or LONG, whatever else it holds). A group multiplies only its 64 least
    magnitudes of at least 2 (``min(v, 64)``: a bounded list, however many values a block
    holds): with more of them, those 64 already multiply past the cap."""
    if agg.name == "mult":
        magnitude = (f"CASE WHEN ({value}) = 0 THEN CAST(1 AS HUGEINT) "
                     f"ELSE abs(CAST(({value}) AS HUGEINT)) END")

        def capped(v):
            least = _fold(c, f"min({v}, 64) FILTER (WHERE {v} >= 2)",
                          lambda a, x: f"least({a} * {x}, {_PRODUCT_CAP})")
            return f"coalesce({least}, CAST(1 AS HUGEINT))"
        return [(f"CAST(({value}) = 0 AS BIGINT)", "sum"),
                (f"CAST(({value}) < 0 AS BIGINT)", "sum"), (magnitude, capped)]
    if agg.name != "iintersect":
        return [(value, _TREE[agg.name])]
    b, e = f'({value})."begin"', f'({value})."end"'
    empty = f"({e} IS NOT NULL AND {e} <= {b})"
    return [(f"CASE WHEN {empty} THEN NULL ELSE {b} END", "max"),
            (f"CASE WHEN {empty} THEN NULL ELSE {e} END", "min"), (empty, "bool_or")]


def _final(agg, parts: list) -> str:
    """One aggregate's value from its combined parts (:func:`_parts`): IINTERSECT is
    [largest begin, least end), the empty interval when that holds no point or an empty one
    was among the intervals."""
    from sira.intervals import empty_interval

    from .functions import interval as interval_sql
    t = agg.result_type
    if agg.name == "mult":  # 0 with a zero among the values; else signed, and in its type
        zeros, negatives, magnitude = parts
        signed = f"(CASE WHEN {negatives} % 2 = 1 THEN -{magnitude} ELSE {magnitude} END)"
        overflow = sira_error("IntOverflow", "mult", f"mult: the product does not fit {t}")
        return (f"CASE WHEN {zeros} > 0 THEN CAST(0 AS HUGEINT) WHEN {signed} < {t.min} OR "
                f"{signed} > {t.max} THEN {overflow} ELSE {signed} END")
    if agg.name != "iintersect":
        (value,) = parts
        return value
    b, e, empty = parts
    return (f"CASE WHEN {empty} OR {b} IS NULL OR ({e} IS NOT NULL AND {e} <= {b}) "
            f"THEN {literal(t, empty_interval(t))} ELSE {interval_sql(b, e)} END")


def _summarized(node, children, c):
    from .windows import summarize_window
    direct = summarize_window(node, c)  # a windowed aggregate with a plan of its own
    if direct is not None:
        return direct
    (child,) = children
    h = node.source.heading
    source = guarded(child, node.source, [e for _, _, e in node.specs])
    if node.using:
        key = [n for n in node.by if n not in node.using]
        (split_sql,) = split(c, [source if source == child else c.define(
            f"SELECT * FROM {source}", "guarded")], [h], list(node.using), key, node=node)
        source = c.define(split_sql, "split")
    if node.by:  # groups are never empty
        return _summary(node, h, c, source, True)
    if not node.specs:  # TABLE_DEE when the input holds a tuple, TABLE_DUM otherwise
        return f"SELECT DISTINCT TRUE AS {DEE} FROM {source}"
    # a global aggregation yields a row even for an empty input, which SUMMARIZEBY must not
    return _summary(node, h, c, source, True, " HAVING count(*) > 0")
