"""Live queries on Spark Structured Streaming: events through S[range T] and a per-key running
sum, as changes, on sira's plan (``sira_spark.live``) beside a hand-written Structured
Streaming program producing the same rows; events per second, the ratio and the state size.

    python benchmarks/spark_live.py                     # 200,000 events (a quick look)
    python benchmarks/spark_live.py --n 10000000        # the issue's figure, on local[2]

The query: changes(summarizebyusing(window(s, ts, range(T)), (k, during), (total(plus(v))),
(during)), at) with ``--keys`` keys and ``--per-unit`` events per time unit, the input written
as ``--batches`` Parquet files read one micro-batch each (``maxFilesPerTrigger=1``, one
``availableNow`` run), a last heartbeat file closing every window. Both programs write their
rows to Parquet; the rows are compared (count and an order-free checksum).

The hand-written program is what a Spark user writes for this query without sira:
``applyInPandasWithState`` keyed by ``k`` with an event-time timeout, its state the key's
pending entries and exits as (time, value, count) arrays and its running sum, each batch's
instants folded with numpy (one ``cumsum`` over the sorted events), a late-row filter against
the watermark. sira's plan runs the live runtime's own operators per key (with its
checkpoint-format state), so the ratio is the price of running the reference operators instead
of a vectorised special case.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

QUERY = ("changes(summarizebyusing(window(s, ts, range({T})), (k, during), (total(plus(v))),"
         " (during)), at)")


def write_input(spark, path, n, keys, per_unit, batches, T):
    """``n`` events (k, v, ts, seq) in ``batches`` Parquet files, then a heartbeat file."""
    from pyspark.sql import functions as F
    step = -(-n // batches)
    for b in range(batches):
        lo, hi = b * step, min(n, (b + 1) * step)
        if lo >= hi:
            break
        df = spark.range(lo, hi).select(
            (F.pmod(F.xxhash64("id"), F.lit(keys))).cast("int").alias("k"),
            (F.pmod(F.xxhash64(F.col("id") + 7), F.lit(100))).cast("int").alias("v"),
            (F.col("id") / per_unit + 1).cast("long").alias("ts"),
            (F.col("id") + 1).alias("seq"), F.lit(False).alias("is_bound"))
        df.coalesce(1).write.parquet(os.path.join(path, f"part-{b:05d}"))
        _touch(path, b)
    last = n // per_unit + T + 10
    spark.createDataFrame([(0, 0, last, 0, True)], "k int, v int, ts long, seq long, "
                          "is_bound boolean").coalesce(1).write.parquet(
        os.path.join(path, f"part-{batches:05d}"))
    _touch(path, batches)


def _touch(path, b):
    folder = os.path.join(path, f"part-{b:05d}")
    for name in os.listdir(folder):
        os.utime(os.path.join(folder, name), (1_000_000 + b, 1_000_000 + b))


def read_source(spark, path):
    return (spark.readStream.schema("k int, v int, ts long, seq long, is_bound boolean")
            .option("maxFilesPerTrigger", 1).option("recursiveFileLookup", "true")
            .parquet(path))


def run_sira(engine, src, out, ck, T, path="auto"):
    from sira_spark.live import LiveSource, stream
    q = stream(engine, QUERY.format(T=T), {"s": LiveSource(read_source(engine.spark, src),
                                                           "ts", "is_bound")},
               sink="parquet", sink_options={"path": out}, checkpoint=ck,
               trigger={"availableNow": True}, path=path)
    q.query.awaitTermination()
    run_sira.path = q.path
    return q.query


# ------------------------------------------------------------------ the hand-written program

def hand_written(spark, src, out, ck, T):
    """The same rows with applyInPandasWithState and numpy, written directly."""
    import numpy as np
    import pandas as pd
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    def fold(key, frames, state):
        w = state.getCurrentWatermarkMs()
        b = (w + 1) // 2 if w > 0 else None  # the bound: watermark = 2 * bound - 1
        if state.exists:
            packed, total, count = state.get
            times, dv, dc = np.frombuffer(packed, dtype=np.int64).reshape(3, -1)
        else:
            times = dv = dc = np.zeros(0, dtype=np.int64)
            total = count = 0
        if not state.hasTimedOut:
            rows = [f for f in frames if len(f)]
            if rows:
                pdf = pd.concat(rows) if len(rows) > 1 else rows[0]
                ts, v = pdf.ts.to_numpy(np.int64), pdf.v.to_numpy(np.int64)
                if b is not None:  # late rows
                    keep = ts >= b
                    ts, v = ts[keep], v[keep]
                one = np.ones(len(ts), dtype=np.int64)
                times = np.concatenate([times, ts, ts + T])
                dv = np.concatenate([dv, v, -v])
                dc = np.concatenate([dc, one, -one])
        ready = times < b if b is not None else np.zeros(len(times), dtype=bool)
        order = np.argsort(times[ready], kind="stable")
        at, starts = np.unique(times[ready][order], return_index=True)
        out_at = np.zeros(0, dtype=np.int64)
        out_total = np.zeros(0, dtype=np.int64)
        kinds = []
        if len(at):
            sv = np.add.reduceat(dv[ready][order], starts)
            sc = np.add.reduceat(dc[ready][order], starts)
            new_total = total + np.cumsum(sv)
            new_count = count + np.cumsum(sc)
            old_total = np.concatenate([[total], new_total[:-1]])
            old_count = np.concatenate([[count], new_count[:-1]])
            changed = (old_total != new_total) | ((old_count > 0) != (new_count > 0))
            minus = changed & (old_count > 0)
            plus = changed & (new_count > 0)
            out_at = np.concatenate([at[minus], at[plus]])
            out_total = np.concatenate([old_total[minus], new_total[plus]])
            kinds = ["-"] * int(minus.sum()) + ["+"] * int(plus.sum())
            total, count = int(new_total[-1]), int(new_count[-1])
        times, dv, dc = times[~ready], dv[~ready], dc[~ready]
        if len(times) or count:
            state.update((np.concatenate([times, dv, dc]).tobytes(), total, count))
            if len(times):
                state.setTimeoutTimestamp(max(2 * int(times.min()), w + 1))
        else:
            state.remove()
        yield pd.DataFrame({"at": out_at, "k": np.full(len(out_at), key[0], dtype=np.int32),
                            "kind": kinds, "total": out_total})

    df = read_source(spark, src)
    df = df.withColumn("evt", F.timestamp_millis(F.col("ts") * 2)).withWatermark(
        "evt", "1 millisecond")
    df = df.where(~F.col("is_bound") | (F.col("evt") < F.timestamp_millis(F.lit(0))))
    result = df.select("k", "v", "ts", "evt").groupBy("k").applyInPandasWithState(
        fold, "at long, k int, kind string, total long",
        "events binary, total long, count long", "append", GroupStateTimeout.EventTimeTimeout)
    q = (result.writeStream.format("parquet").option("path", out)
         .option("checkpointLocation", ck).trigger(availableNow=True).start())
    q.awaitTermination()
    return q


# ------------------------------------------------------------------ reporting

def state_size(query) -> tuple:
    """(largest number of state rows, largest state memory in bytes) over the run's batches."""
    rows = memory = 0
    for p in query.recentProgress:
        for op in p.stateOperators or ():
            rows = max(rows, int(op.numRowsTotal or 0))
            memory = max(memory, int(op.memoryUsedBytes or 0))
    return rows, memory


def summary(spark, path):
    from pyspark.sql import functions as F
    df = spark.read.parquet(path)
    fields = [F.col(c).cast("string") for c in ("at", "k", "kind", "total")]  # types differ
    digest = F.pmod(F.xxhash64(*fields), F.lit(1 << 32))  # a sum of 2**31 rows fits a long
    row = df.select(F.count("*").alias("n"), F.sum(digest).alias("h")).collect()[0]
    return int(row["n"]), int(row["h"] or 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--per-unit", type=int, default=100, help="events per time unit")
    parser.add_argument("--range", type=int, default=100, dest="T", help="T of range(T)")
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--path", default="auto", help="sira's path: auto, vectorised, general")
    args = parser.parse_args()

    os.environ.setdefault("SIRA_SPARK_MASTER", args.master)
    os.environ.setdefault("SIRA_SPARK_PARTITIONS", str(args.partitions))
    from sira_spark import default_engine
    engine = default_engine()
    spark = engine.spark
    root = tempfile.mkdtemp(prefix="sira-spark-live-")
    try:
        src, warm = os.path.join(root, "in"), os.path.join(root, "warm-up")
        write_input(spark, src, args.n, args.keys, args.per_unit, args.batches, args.T)
        write_input(spark, warm, min(args.n, 20_000), args.keys, args.per_unit, 2, args.T)
        programs = {"sira": lambda i, o, c: run_sira(engine, i, o, c, args.T, args.path),
                    "hand-written": lambda i, o, c: hand_written(spark, i, o, c, args.T)}
        for name, run in programs.items():  # JIT, Python workers: neither pays the warm-up
            run(warm, os.path.join(root, f"warm-out-{name}"), os.path.join(root, f"warm-ck-{name}"))
        timings = {}
        queries = {}
        for name, run in programs.items():
            out, ck = os.path.join(root, f"out-{name}"), os.path.join(root, f"ck-{name}")
            t0 = time.perf_counter()
            queries[name] = run(src, out, ck)
            timings[name] = time.perf_counter() - t0
        sira_rows, hand_rows = summary(spark, os.path.join(root, "out-sira")), \
            summary(spark, os.path.join(root, "out-hand-written"))
        print(f"events: {args.n:,} ({args.keys} keys, {args.per_unit} per unit, "
              f"range({args.T}), {args.batches} micro-batches, {args.master})")
        print(f"   sira's path: {run_sira.path}")
        for name in ("sira", "hand-written"):
            rows, memory = state_size(queries[name])
            print(f"{name:>13}: {timings[name]:8.1f} s  {args.n / timings[name]:>12,.0f} events/s"
                  f"  state: {rows:,} rows, {memory / 2**20:.1f} MiB")
        ratio = timings["sira"] / timings["hand-written"]
        print(f"        ratio: {ratio:.2f} (sira / hand-written)")
        print(f"  same output: {sira_rows == hand_rows} ({sira_rows[0]:,} rows)")
        if sira_rows != hand_rows:
            sys.exit(1)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
