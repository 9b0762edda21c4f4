"""Window benchmark: sira's stream windows against hand-written programs, on Spark and in Python.

Spark (``--n`` events, default 10,000,000): the stream S{k LONG, ts LONG, v LONG} is generated
inside Spark (``spark.range``: ts = the row id, a time in milliseconds, increasing and distinct;
k = a hash of the id modulo ``--keys`` (1,000), so each key sees an event about every second;
v = another hash modulo 100), persisted and materialised before timing (not timed). Both
programs start from that same DataFrame; sira gets it as the relvar ``s`` with its default
options: it applies ``distinct()`` where a duplicate could change the result (the counting and
sequencing windows) and checks the columns the schema does not declare non-nullable, and those
costs count (``--promises`` measures ``trust_unique=True, trust_no_nulls=True`` instead; the
cost of ``S.distinct()`` alone is printed either way). Each timed run
builds the program's DataFrame and ends in ``df.write.format("noop")``; runs are interleaved
(sira, hand-written, sira, ...) and the best of ``--repeat`` is kept. After timing, both results
are compared by row count and an order-independent checksum (sum of a hash of every row, on the
columns both compute); with ``--n`` up to ``--collect-limit`` they are also collected and
compared as sets.

1. HOP AVG      A hopping window of 1 minute sliding by 15 seconds, the average of v per key and
                window. sira, as a user writes it with a window table function (one tuple per
                element and window holding it, the window as the plain attributes
                window_start, window_end and window_time):

                    extend(summarizeby(hop(s, ts, size(60000) slide(15000)),
                                       (k, window_start, window_end),
                                       (total(plus(v)) n(plus(1)))),
                           (a(div(tofloat(total), tofloat(n)))))

                An exact integer sum and count, divided, give the same bits as Spark's avg of
                an integer column (sira's AVERAGE type folds a sorted array so that both engines
                agree to the bit; it is dearer and rounds differently). Hand-written: Spark's own
                ``groupBy(k, window(timestamp_millis(ts), "60 seconds", "15 seconds"))
                .agg(avg(v))`` (an Expand of each event into its 4 windows). Same windows
                ([start, end) aligned on the epoch) and the same averages (compared as (k,
                start ms, end ms, a)). sira_spark compiles a SUMMARIZEBY over HOP by panes:
                sums per key and 15 s pane first, then each pane's sums into its 4 windows.
2. ROWS AVG     ``S[partition by k rows 10]`` and the average of each key's window relation,
                pointwise in time (CQL's ``select k, avg(v) from S[partition by k rows 10]
                group by k``):

                    extend(summarizebyusing(window(s, ts, partition(k) rows(10)), (k, during),
                                            (total(plus(v)) n(plus(1))), (during)),
                           (a(div(tofloat(total), tofloat(n)))))

                Per key, the window relation changes at each of the key's events (ts is
                distinct), so this is one tuple per event e: during = [e.ts, the key's next ts)
                (unbounded for the last), the sum, count and average of the key's last 10 events
                up to e -- except that, being a relation, consecutive intervals with equal
                (total, n, a) are packed into one. Hand-written: ``avg(v).over(Window
                .partitionBy(k).orderBy(ts).rowsBetween(-9, 0))`` per event. Check (not timed):
                the hand-written sums/counts/averages, given [ts, next ts) and packed by
                gaps-and-islands, equal sira's result. Second row "vs packed": that
                checking program timed as a baseline (the same relation as sira's, by hand).
                sira_spark compiles this pattern to one running frame per key (no window
                relation is built), then packs the result as every SUMMARIZEBY's.
2b. ROWS AVG    The same frames per event, as a SQL++ WindowBy query with a LABEL (seed 003,
    per event   section 4: a window for every tuple, from nine tuples before it up to it):

                    extend(windowby(s, partition(k) order(ts) sliding, label(as(l) at(lp)),
                                    start(at(sp) when(lp - sp = 9)), end(at(ep) when(ep = lp)),
                                    aggregates(total(sum(w, v)) n(count(w)))),
                           (a(div(tofloat(total), tofloat(n)))))

                One tuple per event (l), with the average of its window: for the first nine
                events of a key the window starts at the key's first event (``opened`` is
                false), exactly the truncated frames of ``rowsBetween(-9, 0)``. Hand-written: the
                same ``avg(v).over(...rowsBetween(-9, 0))`` program; compared as (k, l.ts, a)
                with (k, ts, a), a per-event relation with no packing on either side.
3. SESSION      Sessions with a 3-second timeout (a session ends when the key's next event comes
                more than 3 s after its last one), with each session's first and last time,
                sum and count, as a SQL++ WindowBy query (seed 003, section 4.3):

                    project(extend(windowby(s, partition(k) order(ts) tumbling, start(),
                                            end(as(e) next(en) when(en.ts - e.ts > 3000))),
                                   (first(min(w, ts)) last(max(w, ts)) total(sum(w, v))
                                    n(count(w)))),
                            (k, first, last, total, n, closed))

                after ``push_down_aggregates`` (the paper's rewrite: no window relation is
                built). Hand-written gaps-and-islands: lag(ts) per key, a new-session flag where
                ts - prev > 3000, a running sum of the flags, groupBy(k, session) min/max/sum/
                count. Compared on (k, first, last, total, n) (sira also says which session is
                unclosed: each key's last).

Python (``--py-n`` events, default 1,000,000): S{k INT, ts LONG, v INT}, k random among
``--keys``, ts = 0, 1, 2, ... (one event per instant), v random 0..99, built once with the
trusted ``Relation(heading, body)`` constructor (not timed).

4. RANGE SUM    ``summarizebyusing(window(s, ts, range(3000)), (k, during), (total(plus(v))),
                (during))``: per key, the sum of the values in ``S[range 3000]`` over time, as
                a relation {during, k, total}: for every maximal interval during which the key's
                window holds at least one element and its sum is constant, one tuple (the
                result is packed: adjacent intervals with the same total are one tuple).
                Baseline: plain Python, per key, a deque of (expiry time, v) swept over arrival
                and expiry instants, emitting [instant, next instant) with the running total
                while the deque is not empty and merging adjacent segments with equal totals.
                Asserted equal to sira's set of tuples. sira.evaluate pauses the cyclic garbage
                collector; the headline row runs the baseline with it on, a second row
                ([gc off]) pauses it for both.

Targets: sira / hand-written <= 1.3 on Spark, sira / baseline <= 3 in Python. The script
always exits 0: it is a report.

    python benchmarks/windows.py                      # 10M on Spark, 1M in Python, best of 2
    python benchmarks/windows.py --n 100000 --py-n 100000 --repeat 1
    python benchmarks/windows.py --only hop,session --plans-only
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import random
import sys
import time
import traceback
from collections import deque

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import best_time  # noqa: E402
from benchmarks._spark import (  # noqa: E402
    add_spark_arguments, best_time_pair, checksum, jvm_gc, machine_info, make_session, materialise,
    noop, plan_text, side_by_side)

SPARK_TARGET = 1.3
PYTHON_TARGET = 3.0
HOP_SIZE, HOP_SLIDE = 60_000, 15_000  # milliseconds
ROWS = 10
GAP = 3_000  # milliseconds
PY_RANGE = 3_000


# --- Spark helpers (as in benchmarks/spark.py) -----------------------------------------------

# --- Spark input and cases -------------------------------------------------------------------

def stream_input(spark, n: int, keys: int):
    """S{k, ts, v}: ts = id (ms), k and v hashes of the id."""
    from pyspark.sql import functions as F
    return spark.range(n).select(
        F.pmod(F.xxhash64("id", F.lit(1)), F.lit(keys)).alias("k"),
        F.col("id").alias("ts"),
        F.pmod(F.xxhash64("id", F.lit(2)), F.lit(100)).alias("v"))


def _heading():
    from sira import LONG, Heading
    return Heading.of({"k": LONG, "ts": LONG, "v": LONG})


HOP_QUERY = (f"extend(summarizeby(hop(s, ts, size({HOP_SIZE}) slide({HOP_SLIDE})), "
             f"(k, window_start, window_end), (total(plus(v)) n(plus(1)))), "
             f"(a(div(tofloat(total), tofloat(n)))))")
ROWS_QUERY = (f"extend(summarizebyusing(window(s, ts, partition(k) rows({ROWS})), (k, during), "
              f"(total(plus(v)) n(plus(1))), (during)), (a(div(tofloat(total), tofloat(n)))))")
LABEL_QUERY = (f"extend(windowby(s, partition(k) order(ts) sliding, label(as(l) at(lp)), "
               f"start(at(sp) when(lp - sp = {ROWS - 1})), end(at(ep) when(ep = lp)), "
               f"aggregates(total(sum(w, v)) n(count(w)))), "
               f"(a(div(tofloat(total), tofloat(n)))))")
SESSION_QUERY = (f"project(extend(windowby(s, partition(k) order(ts) tumbling, start(), "
                 f"end(as(e) next(en) when(en.ts - e.ts > {GAP}))), "
                 f"(first(min(w, ts)) last(max(w, ts)) total(sum(w, v)) n(count(w)))), "
                 f"(k, first, last, total, n, closed))")


def case_hop(spark, engine, s):
    import sira
    from pyspark.sql import functions as F
    tree = sira.parse(HOP_QUERY, {"s": _heading()})

    def run_sira():
        return engine.dataframe(tree, {"s": s})

    def run_hand():
        return s.groupBy("k", F.window(F.timestamp_millis("ts"), f"{HOP_SIZE // 1000} seconds",
                                       f"{HOP_SLIDE // 1000} seconds")).agg(F.avg("v").alias("a"))

    def common_sira(df):
        return df.select("k", F.col("window_start").alias("b"), F.col("window_end").alias("e"),
                         "a")

    def common_hand(df):
        return df.select("k", F.unix_millis(F.col("window.start")).alias("b"),
                         F.unix_millis(F.col("window.end")).alias("e"), "a")

    return dict(label=f"HOP {HOP_SIZE // 1000}s/{HOP_SLIDE // 1000}s avg per key", query=HOP_QUERY,
                sira=run_sira, hand=run_hand, common_sira=common_sira, common_hand=common_hand)


def hand_rows_average(s):
    """The hand-written ROWS program: each event with the average of its key's last ROWS."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    w = Window.partitionBy("k").orderBy("ts").rowsBetween(-(ROWS - 1), 0)
    return s.select("k", "ts", F.avg("v").over(w).alias("a"))


def case_rows(spark, engine, s):
    import sira
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    tree = sira.parse(ROWS_QUERY, {"s": _heading()})
    w = Window.partitionBy("k").orderBy("ts")

    def run_sira():
        return engine.dataframe(tree, {"s": s})

    def run_hand():
        return hand_rows_average(s)

    def common_sira(df):
        return df.select("k", F.col("during.begin").alias("b"), F.col("during.end").alias("e"),
                         "total", "n", "a")

    def packed_by_hand():
        # the per-event frames as sira's relation: [ts, next ts) with the frame's sum, count
        # and average (the timed program's expression), packed on equal (total, n, a)
        frame = w.rowsBetween(-(ROWS - 1), 0)
        per = s.select("k", "ts", F.sum("v").over(frame).alias("total"),
                       F.count(F.lit(1)).over(frame).cast("int").alias("n"),
                       F.avg("v").over(frame).alias("a"), F.lead("ts").over(w).alias("e"))
        same = ((F.lag("total").over(w) == F.col("total")) & (F.lag("n").over(w) == F.col("n"))
                & (F.lag("a").over(w) == F.col("a")))
        isl = per.withColumn("__new", F.when(same, 0).otherwise(1)).withColumn(
            "__i", F.sum("__new").over(w.rowsBetween(Window.unboundedPreceding, 0)))
        packed = isl.groupBy("k", "__i").agg(
            F.min("ts").alias("b"), F.max_by("e", "ts").alias("e"),
            F.first("total").alias("total"), F.first("n").alias("n"), F.first("a").alias("a"))
        return packed.select("k", "b", "e", "total", "n", "a")

    def common_hand(df):  # not timed: see packed_by_hand
        return packed_by_hand()

    return dict(label=f"ROWS {ROWS} avg per key", query=ROWS_QUERY, sira=run_sira,
                hand=run_hand, common_sira=common_sira, common_hand=common_hand,
                hand_same=("vs packed", packed_by_hand))


def case_session(spark, engine, s):
    import sira
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from sira.algebra.windowby import push_down_aggregates
    tree = push_down_aggregates(sira.parse(SESSION_QUERY, {"s": _heading()}))
    w = Window.partitionBy("k").orderBy("ts")

    def run_sira():
        return engine.dataframe(tree, {"s": s})

    def run_hand():
        prev = F.lag("ts").over(w)
        flagged = s.withColumn("__new", F.when(prev.isNull() | (F.col("ts") - prev > GAP), 1)
                               .otherwise(0))
        sess = flagged.withColumn("__s", F.sum("__new").over(
            w.rowsBetween(Window.unboundedPreceding, 0)))
        return sess.groupBy("k", "__s").agg(
            F.min("ts").alias("first"), F.max("ts").alias("last"),
            F.sum("v").alias("total"), F.count(F.lit(1)).cast("int").alias("n"))

    def common(df):
        return df.select("k", "first", "last", "total", "n")

    return dict(label=f"SESSION gap {GAP // 1000}s (WindowBy)", query=repr(tree), sira=run_sira,
                hand=run_hand, common_sira=common, common_hand=common)


def case_label(spark, engine, s):
    import sira
    from pyspark.sql import functions as F
    tree = sira.parse(LABEL_QUERY, {"s": _heading()})

    def run_sira():
        return engine.dataframe(tree, {"s": s})

    def run_hand():
        return hand_rows_average(s)

    def common_sira(df):
        return df.select("k", F.col("l.ts").alias("ts"), "a")

    def common_hand(df):
        return df.select("k", "ts", "a")

    return dict(label=f"ROWS {ROWS} avg per event (WindowBy)", query=LABEL_QUERY,
                sira=run_sira, hand=run_hand, common_sira=common_sira, common_hand=common_hand)


SPARK_CASES = (("hop", case_hop), ("rows", case_rows), ("label", case_label),
               ("session", case_session))


def run_spark(args, wanted, rows_out: list):
    t0 = time.perf_counter()
    spark = make_session(args.master, args.partitions, args.driver_memory, "sira-windows-benchmark")
    from sira_spark import SparkEngine
    engine = SparkEngine(spark=spark, trust_unique=args.promises, trust_no_nulls=args.promises)
    n = max(10, args.n)
    print(f"Spark: n={n:,} events, {args.keys:,} keys, best of {args.repeat} (session started in "
          f"{time.perf_counter() - t0:.1f}s)")
    for line in machine_info(spark):
        print(line)
    print(flush=True)
    plans = []
    s = None
    try:
        # warm-up, not timed: code generation for both programs on a tiny input
        if not args.plans_only:
            warm = materialise(stream_input(spark, 2000, 10))
            for name, case in SPARK_CASES:
                if wanted(name):
                    info = case(spark, engine, warm)
                    noop(info["sira"]())
                    noop(info["hand"]())
            warm.unpersist()
        t1 = time.perf_counter()
        s = materialise(stream_input(spark, n, args.keys))
        print(f"  [input S: {n:,} events materialised in {time.perf_counter() - t1:.1f}s]",
              flush=True)
        if not args.plans_only:  # how much of sira's time is the distinct() of its relvar
            best = math.inf
            for _ in range(args.repeat):
                t1 = time.perf_counter()
                noop(s.distinct())
                best = min(best, time.perf_counter() - t1)
            print(f"  [for reference: S.distinct() alone, the first step of a sira plan over "
                  f"a counting window, takes {best:.2f}s]", flush=True)
        for name, case in SPARK_CASES:
            if not wanted(name):
                continue
            try:
                info = case(spark, engine, s)
                label = info["label"]
                if args.plans_only:
                    print(f"=== {label}: {info['query']}")
                    print(side_by_side(plan_text(info["sira"]()), plan_text(info["hand"]()),
                                       width=90))
                    print(flush=True)
                    continue
                sira_s, hand_s, sira_df, hand_df = best_time_pair(
                    spark, lambda: noop(info["sira"]()), lambda: noop(info["hand"]()),
                    args.repeat)
                a = info["common_sira"](sira_df)
                b = info["common_hand"](hand_df)
                sa, sb = checksum(a), checksum(b)
                equal = sa == sb
                note = (f"count {sa[0]:,} vs {sb[0]:,}, checksum "
                        f"{'equal' if sa[1] == sb[1] else 'DIFFERENT'}")
                if equal and n <= args.collect_limit:
                    ra = {tuple(r) for r in a.collect()}
                    rb = {tuple(r) for r in b.collect()}
                    equal = ra == rb
                    note += f"; collected sets {'equal' if equal else 'DIFFERENT'}"
                ratio = sira_s / hand_s if hand_s > 0 else math.inf
                verdict = ("PASS" if ratio <= SPARK_TARGET else "OVER") if equal else "WRONG"
                rows_out.append(f"{label:<40} {n:>11,} {sa[0]:>12,} {sira_s:>8.2f} "
                                f"{hand_s:>8.2f} {n / sira_s:>12,.0f} {ratio:>6.2f} "
                                f"{'<= ' + format(SPARK_TARGET, 'g'):>7}  {verdict}")
                print(f"  [{label}: sira {sira_s:.2f}s, hand-written {hand_s:.2f}s, ratio "
                      f"{ratio:.2f}; {note}]", flush=True)
                if "hand_same" in info:  # a second baseline computing sira's exact relation
                    suffix, fn = info["hand_same"]
                    _, same_s, _, _ = best_time_pair(spark, lambda: None,
                                                           lambda: noop(fn()), args.repeat)
                    same_ratio = sira_s / same_s if same_s > 0 else math.inf
                    rows_out.append(f"{label + ' ' + suffix:<40} {n:>11,} {sa[0]:>12,} "
                                    f"{sira_s:>8.2f} {same_s:>8.2f} {n / sira_s:>12,.0f} "
                                    f"{same_ratio:>6.2f} {'<= ' + format(SPARK_TARGET, 'g'):>7}"
                                    f"  {'PASS' if same_ratio <= SPARK_TARGET else 'OVER'}")
                    print(f"  [{label} {suffix}: hand-written with sira's packing "
                          f"{same_s:.2f}s, ratio {same_ratio:.2f}]", flush=True)
                if args.explain or (args.explain_over and ratio > SPARK_TARGET):
                    plans.append((label, side_by_side(plan_text(info["sira"]()),
                                                      plan_text(info["hand"]()))))
            except Exception:  # noqa: BLE001 (a report: keep going)
                print(f"  [{name}: FAILED]")
                traceback.print_exc()
                rows_out.append(f"{name:<40} {'':>11} {'':>12} {'':>8} {'':>8} {'':>12} "
                                f"{'':>6} {'':>7}  ERROR")
            finally:
                gc.collect()
                jvm_gc(spark)
    finally:
        if s is not None:
            s.unpersist()
        for label, text in plans:
            print(f"\n=== physical plans: {label} ===\n{text}")
        try:
            spark.stop()
        except Exception:  # noqa: BLE001
            pass


# --- Python engine: S[range T] and a per-key sum, against a deque sweep ------------------------

def python_input(n: int, keys: int, seed: int):
    from sira import INT, LONG, Heading, Relation
    heading = Heading.of({"k": INT, "ts": LONG, "v": INT})
    assert heading.names == ("k", "ts", "v")
    rng = random.Random(seed)
    body = frozenset((rng.randrange(keys), t, rng.randrange(100)) for t in range(n))
    return heading, Relation(heading, body)


def deque_baseline(body, rng_t: int):
    """{(Interval(begin, end), k, total)}: per key, the packed sum of S[range T] over time."""
    from sira import Interval
    groups: dict = {}
    for k, t, v in body:
        lst = groups.get(k)
        if lst is None:
            groups[k] = [(t, v)]
        else:
            lst.append((t, v))
    out = set()
    add = out.add
    inf = math.inf
    for k, events in groups.items():
        events.sort()
        dq = deque()
        total = count = 0
        i, m = 0, len(events)
        seg_b = None  # the current segment's begin (the last change instant)
        run_b = run_e = run_total = None  # the packed run so far
        while i < m or dq:
            t_arr = events[i][0] if i < m else inf
            t_exp = dq[0][0] if dq else inf
            t = t_arr if t_arr < t_exp else t_exp
            if count:  # the segment [seg_b, t) with the running total
                if run_e == seg_b and run_total == total:
                    run_e = t
                else:
                    if run_b is not None:
                        add((Interval(run_b, run_e), k, run_total))
                    run_b, run_e, run_total = seg_b, t, total
            while dq and dq[0][0] == t:
                total -= dq.popleft()[1]
                count -= 1
            while i < m and events[i][0] == t:
                v = events[i][1]
                dq.append((t + rng_t, v))
                total += v
                count += 1
                i += 1
            seg_b = t
        if run_b is not None:
            add((Interval(run_b, run_e), k, run_total))
    return out


def run_python(args, rows_out: list):
    import sira
    n = max(10, args.py_n)
    t0 = time.perf_counter()
    heading, s = python_input(n, args.keys, args.seed)
    print(f"Python: n={n:,} events, {args.keys:,} keys, range {PY_RANGE}, best of "
          f"{args.repeat}; Python {platform.python_version()} "
          f"({platform.python_implementation()}); input built in {time.perf_counter() - t0:.1f}s",
          flush=True)
    query = (f"summarizebyusing(window(s, ts, range({PY_RANGE})), (k, during), (total(plus(v))), "
             f"(during))")
    tree = sira.parse(query, {"s": heading})
    relvars = {"s": s}
    # warm-up on a tiny input
    wh, ws = python_input(200, 5, 1)
    assert sira.evaluate(tree, {"s": ws}).body == deque_baseline(ws.body, PY_RANGE)

    def run_sira():
        return sira.evaluate(tree, relvars).body

    def run_base():
        return deque_baseline(s.body, PY_RANGE)

    for gc_off in (False, True):
        sira_s, sira_body = best_time(run_sira, args.repeat, gc_off)
        base_s, base_body = best_time(run_base, args.repeat, gc_off)
        equal = sira_body == base_body
        out_n = len(sira_body)
        sira_body = base_body = None
        ratio = sira_s / base_s if base_s > 0 else math.inf
        verdict = ("PASS" if ratio <= PYTHON_TARGET else "OVER") if equal else "WRONG"
        label = f"S[range {PY_RANGE}] per-key sum" + (" [gc off]" if gc_off else "")
        rows_out.append(f"{label:<40} {n:>11,} {out_n:>12,} {sira_s:>8.2f} {base_s:>8.2f} "
                        f"{n / sira_s:>12,.0f} {ratio:>6.2f} "
                        f"{'<= ' + format(PYTHON_TARGET, 'g'):>7}  {verdict}")
        print(f"  [{label}: sira {sira_s:.2f}s, deque baseline {base_s:.2f}s, ratio {ratio:.2f}; "
              f"results {'equal' if equal else 'DIFFERENT'} ({out_n:,} tuples)]", flush=True)


# --- main ------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000,
                        help="events in the Spark stream (default 10,000,000)")
    parser.add_argument("--py-n", type=int, default=1_000_000,
                        help="events in the Python engine's stream (default 1,000,000)")
    parser.add_argument("--keys", type=int, default=1000, help="distinct keys (default 1,000)")
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs per measurement; the best is reported (default 2)")
    parser.add_argument("--only", default=None,
                        help="comma-separated subset: hop,rows,label,session,python")
    parser.add_argument("--seed", type=int, default=2024)
    add_spark_arguments(parser)
    parser.add_argument("--plans-only", action="store_true",
                        help="print sira's physical plan beside the hand-written one for each "
                             "Spark case, without timing")
    parser.add_argument("--explain", action="store_true",
                        help="print both physical plans for every Spark case after timing")
    parser.add_argument("--explain-over", action="store_true",
                        help="print both physical plans for Spark cases over the target")
    args, _unknown = parser.parse_known_args(argv)  # run_all.py may pass other scripts' flags
    args.repeat = max(1, args.repeat)
    only = None if args.only is None else {x.strip().lower() for x in args.only.split(",")}

    def wanted(name):
        return only is None or name in only

    import sira
    print(f"sira {sira.__version__} window benchmark; Python {platform.python_version()}")
    rows_out: list = []
    if any(wanted(name) for name, _ in SPARK_CASES):
        try:
            run_spark(args, wanted, rows_out)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
    if wanted("python") and not args.plans_only:
        try:
            run_python(args, rows_out)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            rows_out.append(f"{'python':<40} ERROR")
    if args.plans_only:
        return 0
    header = (f"{'operation':<40} {'n':>11} {'result rows':>12} {'sira s':>8} "
              f"{'base s':>8} {'sira rows/s':>12} {'ratio':>6} {'target':>7}  verdict")
    print()
    print(header)
    print("-" * len(header))
    for line in rows_out:
        print(line)
    print()
    print("n: input events. sira rows/s: input events per second. ratio: sira seconds / "
          "hand-written (Spark) or deque baseline (Python) seconds; results compared as described "
          "in the docstring.")
    print("Spark: both programs read the same persisted input and end in a noop write; sira "
          + ("runs with trust_unique=True and trust_no_nulls=True (--promises)."
             if args.promises else
             "runs with default options (its distinct() and NULL checks count).")
          + " Python: [gc off] pauses the cyclic collector for the baseline too (sira.evaluate "
          "pauses it itself).")
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception:  # noqa: BLE001 (always exit 0: this is a report)
        traceback.print_exc()
    sys.exit(0)
