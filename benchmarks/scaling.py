"""Scaling: every operator family on every engine, on the shapes users have, at n and 10n.

    python benchmarks/scaling.py                              # python and duckdb, 100k and 1M
    python benchmarks/scaling.py --engines spark --n 100000 --factor 10
    python benchmarks/scaling.py --families pack,splcount --shapes one,skew --n 10000

Each run is its own process (so its peak memory, VmHWM, is its own), with a timeout
(``--timeout``, default 600 s: a run past it prints ``timeout``). The input is made in that
process before the clock starts: a stream ``s(ts LONG, k INT, v INT)`` of n tuples, ts = 0..n-1,
and for the interval families ``r(k INT, during LONGINTERVAL, v INT)`` with during = [ts, ts+L)
and ``q`` the same shifted by L/2 (so the USING operators have overlaps to split), and for
TCLOSE chains of ten edges. The shapes:

* ``one``: one sequence, every tuple k = 0;
* ``ten``: ten keys with long histories (k = ts mod 10);
* ``many``: n/10 keys of ten tuples (k = ts div 10);
* ``skew``: one key holds 90% of the tuples, nine others the rest;
* for the interval families the same keys with short (L = 4) or long (L = 1000) intervals:
  ``one-short``, ``one-long``, ``ten-short``, ``ten-long``, ``skew-short``.

The clock covers ``sira.evaluate`` on the Python engine (the Relation is the result),
``DuckDBEngine().arrow`` on DuckDB (an Arrow table), and on Spark the DataFrame written to the
``noop`` sink; inputs are a Relation (Python; the garbage collector's first scan of it done
before timing, as loading), Arrow tables (DuckDB), DataFrames persisted and counted before
timing (Spark); default options throughout. Each line prints the seconds, the
peak memory, the growth for 10x rows (time at 10n / time at n) and the ratio to the Python
engine at the same size. The figures of a run are recorded in CHANGELOG.md ("Performance").
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

SEQUENCE_SHAPES = ("one", "ten", "many", "skew")
INTERVAL_SHAPES = ("one-short", "one-long", "ten-short", "ten-long", "skew-short")

#: family -> (query text over s / r, q / e, the shapes it runs on)
FAMILIES = {
    "restrict-project": ("project(restrict(s, gt(v, 50)), (k, v))", ("ten", "skew")),
    "join": ("join(s, rename(project(s, (ts, v)), (v, w)))", ("ten",)),
    "summarizeby": ("summarizeby(s, (k), (t(plus(v)) n(plus(1))))", ("ten", "many", "skew")),
    "summarizeby-float": ("summarizeby(s, (k), (t(plus(mult(tofloat(v), 0.1)))))",
                          ("ten", "many", "skew")),
    "group-ungroup": ("ungroup(group(s, (g(ts, v))), g)", ("ten", "many", "skew")),
    "minus": ("minus(s, restrict(s, eq(mod(v, 3), 0)))", ("ten",)),
    "tclose": ("tclose(e, (a, b))", ("ten",)),
    "pack": ("pack(r, (during))", INTERVAL_SHAPES),
    "pack-keyed": ("pack(project(r, (k, during)), (during))", INTERVAL_SHAPES),
    "unpack": ("unpack(project(r, (k, during)), (during))", ("one-short", "ten-short")),
    "unionusing": ("unionusing(project(r, (k, during)), project(q, (k, during)), (during))",
                   INTERVAL_SHAPES),
    "minususing": ("minususing(project(r, (k, during)), project(q, (k, during)), (during))",
                   INTERVAL_SHAPES),
    "intersectusing": ("intersectusing(project(r, (k, during)), project(q, (k, during)),"
                       " (during))", INTERVAL_SHAPES),
    "joinusing": ("joinusing(r, rename(q, (v, w)), (during))", INTERVAL_SHAPES),
    "leftjoin": ("leftjoin(r, rename(q, (v, w)), (w(int(-1))))", INTERVAL_SHAPES),
    "summarizebyusing": ("summarizebyusing(r, (k, during), (t(plus(v))), (during))",
                         INTERVAL_SHAPES),
    "summarizebyusing-float": ("summarizebyusing(r, (k, during), (t(plus(mult(tofloat(v), 0.1)))),"
                               " (during))", INTERVAL_SHAPES),
    "summarizebyusing-max": ("summarizebyusing(r, (k, during), (m(max(v)), a(and(gt(v, 50)))),"
                             " (during))", INTERVAL_SHAPES),
    "cql-now": ("window(s, ts, now)", ("one", "ten")),
    "cql-range": ("window(s, ts, range(10))", ("one", "ten")),
    "cql-range-slide": ("window(s, ts, range(10) slide(5))", ("one", "ten")),
    "cql-rows": ("window(s, ts, rows(10))", ("one", "ten")),
    "cql-rows-slide": ("window(s, ts, rows(10) slide(5))", ("one", "ten")),
    "cql-unbounded": ("window(s, ts, range(unbounded))", ("one", "ten")),
    "cql-range-on": ("window(s, ts, range(10) on(ts))", ("one",)),
    "cql-range-on-unordered": ("window(s, ts, range(10) on(v))", ("one",)),
    "cql-partition-rows": ("window(s, ts, partition(k) rows(3))", ("ten", "many", "skew")),
    "window-sum": ("summarizebyusing(window(s, ts, range(10)), (k, during), (t(plus(v))),"
                   " (during))", ("one", "ten", "skew")),
    "window-float-sum": ("summarizebyusing(window(s, ts, range(1000)), (k, during),"
                         " (t(plus(mult(tofloat(v), 0.1)))), (during))", ("one", "ten", "skew")),
    "rows-max": ("summarizebyusing(window(s, ts, partition(k) rows(1000)), (k, during),"
                 " (m(max(v)), t(plus(v))), (during))", ("ten", "skew")),
    "rows-max-one": ("summarizebyusing(window(s, ts, rows(1000)), (during),"
                     " (m(max(v)), t(plus(v))), (during))", ("one",)),
    "rows-sum": ("summarizebyusing(window(s, ts, rows(10)), (during), (t(plus(v))), (during))",
                 ("one",)),
    "istream": ("istream(summarizebyusing(window(s, ts, range(10)), (k, during),"
                " (t(plus(v))), (during)), at)", ("one", "ten")),
    "dstream": ("dstream(project(window(s, ts, rows(5)), (k, v, during)), at)", ("one", "ten")),
    "changes": ("changes(summarizebyusing(window(s, ts, range(10)), (k, during),"
                " (t(plus(v))), (during)), at)", ("one", "ten")),
    "tumble": ("summarizeby(tumble(s, ts, size(100)), (k, window_start, window_end),"
               " (t(plus(v))))", ("one", "ten")),
    "hop": ("summarizeby(hop(s, ts, size(100) slide(25)), (k, window_start, window_end),"
            " (t(plus(v))))", ("one", "ten")),
    "cumulate": ("summarizeby(cumulate(s, ts, step(25) size(100)), (k, window_start,"
                 " window_end), (t(plus(v))))", ("one", "ten")),
    "session": ("summarizeby(session(s, ts, gap(5) partition(k)), (k, window_start,"
                " window_end), (t(plus(v))))", ("one", "ten", "skew")),
    "spl-tumbling-count": ("splwindow(s, ts, tumbling, count(10))", ("one",)),
    "spl-sliding-count": ("splwindow(s, ts, sliding, count(10) trigger(count(5)))", ("one",)),
    "spl-tumbling-delta": ("splwindow(s, ts, tumbling, delta(ts, 10))", ("one",)),
    "spl-tumbling-delta-unordered": ("splwindow(s, ts, tumbling, delta(v, 30))",
                                     ("one", "ten")),
    "spl-partitioned-delta": ("splwindow(s, ts, tumbling, delta(ts, 10) partitioned(k))",
                              ("ten", "many", "skew")),
    "spl-sliding-delta": ("splwindow(s, ts, sliding, delta(ts, 10) trigger(count(5)))",
                          ("one",)),
    "spl-partitioned-sliding-delta": ("splwindow(s, ts, sliding, delta(ts, 50) trigger(count(2))"
                                      " partitioned(k))", ("ten", "many", "skew")),
    "spl-float-delta": ("splwindow(extend(s, f(tofloat(ts))), ts, sliding, delta(f, 10.5)"
                        " trigger(count(5)) partitioned(k))", ("one", "ten", "skew")),
    "spl-float-tumbling": ("splwindow(extend(s, f(tofloat(v))), ts, tumbling,"
                           " delta(f, 30.5))", ("one",)),
    "spl-delta-trigger": ("splwindow(s, ts, sliding, count(10) trigger(delta(ts, 5)))",
                          ("one",)),
    "spl-time-trigger": ("splwindow(s, ts, sliding, time(10) trigger(time(5)))", ("one",)),
    "spl-partitioned-time-trigger": ("splwindow(s, ts, sliding, time(20) trigger(time(5))"
                                     " partitioned(k))", ("ten", "many", "skew")),
    "spl-partitioned-delta-trigger": ("splwindow(s, ts, sliding, time(20) trigger(delta(ts, 30))"
                                      " partitioned(k))", ("ten", "many", "skew")),
    "spl-sliding-time": ("splwindow(s, ts, sliding, time(10) trigger(count(5)))", ("one",)),
    "spl-tumbling-time": ("splwindow(s, ts, tumbling, time(10))", ("one",)),
    "spl-partitioned": ("splwindow(s, ts, tumbling, count(10) partitioned(k))",
                        ("ten", "many", "skew")),
    "spl-partitionage": ("splwindow(s, ts, sliding, count(10) trigger(count(5))"
                         " partitioned(k, partitionage(50)))", ("one", "ten", "skew")),
    "spl-partitioncount": ("splwindow(s, ts, tumbling, count(10) partitioned(k,"
                           " partitioncount(5)))", ("ten", "skew")),
    "spl-sliding-partitioncount": ("splwindow(s, ts, sliding, count(10) trigger(count(5))"
                                   " partitioned(k, partitioncount(5)))", ("ten", "many", "skew")),
    "spl-timeinterval": ("splwindow(s, ts, timeinterval, intervalduration(10)"
                         " creationperiod(5))", ("one",)),
    "windowby-sliding": ("windowby(s, order(ts) sliding, start(as(a) at(sp) when(eq(a.v, 0))),"
                         " end(at(ep) when(eq(minus(ep, sp), 3))))", ("one",)),
    "windowby-tumbling": ("windowby(s, order(ts) tumbling, start(as(a) at(sp)"
                          " when(eq(a.v, 0))), end(at(ep) when(eq(minus(ep, sp), 3))))",
                          ("one",)),
    "windowby-label": ("windowby(s, order(ts) sliding, label(as(l) at(lp) when(eq(l.v, 7))),"
                       " start(at(sp) when(eq(minus(lp, sp), 1))), end(at(ep)"
                       " when(eq(minus(ep, lp), 1))))", ("one",)),
    "windowby-partitioned": ("windowby(s, partition(k) order(ts) sliding, start(as(a) at(sp)"
                             " when(eq(a.v, 0))), end(at(ep) when(eq(minus(ep, sp), 3))))",
                             ("ten", "many", "skew")),
    "windowby-session": ("windowby(s, partition(k) order(ts) tumbling, start(as(a) at(sp)),"
                         " end(as(b) at(ep) next(nx) when(or(is_missing(nx),"
                         " gt(minus(nx.ts, b.ts), 3)))), aggregates(t(sum(w, v))))",
                         ("ten", "skew")),
}


# ------------------------------------------------------------------------------ one run

def _keys(shape, n):
    import numpy as np
    ts = np.arange(n, dtype=np.int64)
    base = shape.split("-")[0]
    if base == "one":
        return ts, np.zeros(n, dtype=np.int32)
    if base == "ten":
        return ts, (ts % 10).astype(np.int32)
    if base == "many":
        return ts, (ts // 10).astype(np.int32)
    # skew: key 0 holds 90%, keys 1..9 the rest
    k = np.where(ts % 10 != 0, 0, 1 + (ts // 10) % 9)
    return ts, k.astype(np.int32)


def make_inputs(family, shape, n):
    """The family's relvars as Arrow tables (the engines read them as they are)."""
    import numpy as np
    import pyarrow as pa
    text = FAMILIES[family][0]
    ts, k = _keys(shape, n)
    v = (ts * 7919) % 100
    out = {}
    if "(s," in text or "(s)" in text or text.startswith(("window(s", "join(s")):
        out["s"] = pa.table({"ts": ts, "k": k, "v": v.astype(np.int32)})
    if "(r," in text or " r," in text:
        length = 1000 if shape.endswith("long") else 4
        for name, shift in (("r", 0), ("q", length // 2)):
            iv = pa.StructArray.from_arrays([pa.array(ts + shift), pa.array(ts + shift + length)],
                                            names=["begin", "end"])
            out[name] = pa.table({"k": k, "during": iv, "v": v.astype(np.int32)})
    if "tclose(e" in text:
        a = ts[ts % 10 != 9]
        out["e"] = pa.table({"a": a, "b": a + 1})
    return out


def run_one(engine, family, shape, n, max_tuples=None) -> dict:
    """Time one run in this process: {"seconds", "rows"}. ``max_tuples``: the guard's limit
    (None: the default, 50,000,000), for a family whose result is larger at this size."""
    import sira
    text = FAMILIES[family][0]
    tables = make_inputs(family, shape, n)
    options = {} if max_tuples is None else {"max_tuples": max_tuples}
    if engine == "python":
        relvars = {name: sira.from_arrow(t) for name, t in tables.items()}
        # the collector's first scan of the objects just loaded (from_arrow runs with it
        # paused) is loading, not the query: about 4 s for a million interval tuples, which the
        # query's first collection paid before (the Python engine pauses it while it evaluates)
        gc.collect()
        start = time.perf_counter()
        result = sira.evaluate(text, relvars, **options)
        return {"seconds": time.perf_counter() - start, "rows": len(result)}
    if engine == "duckdb":
        from sira_duckdb import DuckDBEngine
        eng = DuckDBEngine()
        eng.arrow("restrict(s, gt(v, 1000))" if "s" in tables else text,
                  {name: t.slice(0, 10) for name, t in tables.items()})  # warm-up
        start = time.perf_counter()
        result = eng.arrow(text, tables, **options)
        return {"seconds": time.perf_counter() - start, "rows": result.num_rows}
    import shutil
    import tempfile

    import pyarrow.parquet as pq

    from sira_spark import SparkEngine
    eng = SparkEngine.local()
    # through Parquet: a pandas frame of 10M interval structs does not fit the default heap
    folder = tempfile.mkdtemp(prefix="sira-scaling-")
    frames = {}
    for name, t in tables.items():
        pq.write_table(t, os.path.join(folder, f"{name}.parquet"))
        frames[name] = eng.spark.read.parquet(os.path.join(folder, f"{name}.parquet")).persist()
    for df in frames.values():
        df.count()
    start = time.perf_counter()
    df = eng.dataframe(text, frames, **options)
    df.write.format("noop").mode("overwrite").save()
    seconds = time.perf_counter() - start
    rows = df.count()
    shutil.rmtree(folder, ignore_errors=True)
    return {"seconds": seconds, "rows": rows}


def in_process(engine, family, shape, n, timeout, max_tuples=None) -> dict:
    """``run_one`` in a new process: its result with the peak memory, or an error/timeout
    (the error's own line: sira's exception and message, or Java's, not a stack frame)."""
    code = (f"import sys, json; sys.path.insert(0, {ROOT!r}); sys.argv = ['x'];"
            f"import benchmarks.scaling as b; from benchmarks._common import own_peak_kib;"
            f" r = b.run_one({engine!r}, {family!r}, {shape!r},"
            f" {n}, {max_tuples!r}); r['peak_mib'] = own_peak_kib() / 1024;"
            f" print('RESULT ' + json.dumps(r))")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": error_line(done.stderr)[:160]}


def error_line(stderr: str) -> str:
    """The line of a failed run's output that names the error: the last one that starts with
    an exception's name (``sira.errors.TooManyTuples: ...``, ``java.lang.OutOfMemoryError``),
    else the last line."""
    import re
    lines = stderr.strip().splitlines() or ["failed"]
    named = [ln.strip() for ln in lines
             if re.match(r"\s*[\w.$]*(Error|Exception|TooManyTuples|Unavailable)\b", ln)]
    return named[-1] if named else lines[-1]


# ------------------------------------------------------------------------------ the table

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="python,duckdb")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--factor", type=int, default=10)
    ap.add_argument("--families", default="", help="comma-separated (default: all)")
    ap.add_argument("--shapes", default="", help="comma-separated (default: each family's)")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)
    engines = args.engines.split(",")
    families = args.families.split(",") if args.families else list(FAMILIES)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        ap.error(f"unknown families {', '.join(unknown)} (the families are "
                 f"{', '.join(FAMILIES)})")
    sizes = (args.n, args.n * args.factor)
    print(f"scaling benchmark: n = {sizes[0]:,} and {sizes[1]:,}; engines {engines}; "
          f"{os.cpu_count()} cpus")
    width = max(len(f) for f in ["family", *families]) + 2  # the longest name, then a gap
    print(f"{'family':<{width}}{'shape':<12}{'engine':<8}" + "".join(
        f"{'s@' + _short(n):>10}{'MiB':>7}" for n in sizes) + f"{'growth':>8}{'vs py':>8}")
    for family in families:
        shapes = FAMILIES[family][1]
        if args.shapes:
            shapes = [s for s in args.shapes.split(",") if s in shapes]
        for shape in shapes:
            reference = {}
            for engine in engines:
                cells, times = "", []
                for n in sizes:
                    r = in_process(engine, family, shape, n, args.timeout)
                    if "error" in r:
                        cells += f"{r['error'][:16]:>17}"
                        times.append(None)
                        continue
                    cells += f"{r['seconds']:>10.2f}{r['peak_mib']:>7.0f}"
                    times.append(r["seconds"])
                    if engine == "python":
                        reference[n] = r["seconds"]
                growth = (f"{times[1] / times[0]:>8.1f}" if None not in times and times[0] > 0
                          else f"{'-':>8}")
                ratio = (f"{times[1] / reference[sizes[1]]:>8.2f}"
                         if times[1] is not None and reference.get(sizes[1]) else f"{'-':>8}")
                print(f"{family:<{width}}{shape:<12}{engine:<8}{cells}{growth}{ratio}",
                      flush=True)
    return 0


def _short(n) -> str:
    """``1M``, ``100k``, or the number itself (``1,500``) when it is not a whole thousand."""
    if n and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    return f"{n // 1000}k" if n and n % 1000 == 0 else f"{n:,}"


if __name__ == "__main__":
    raise SystemExit(main())
