"""Live streams: events through a filter, S[range T] and a per-key sum, on the incremental runtime
beside a plain-Python deque program producing the same changes, and the peak memory at growing
input sizes (each size in its own process, peak RSS).

    python benchmarks/live.py                      # 200,000 events; memory at 100k/200k/400k
    python benchmarks/live.py --n 10000000 --sizes 1000000,5000000,10000000

The query: changes(summarizebyusing(window(restrict(s, gt(v, 10)), ts, range(1000)),
(k, during), (total(plus(v))), (during)), at) with 100 keys and one event per time unit.

sira is timed twice: rows inserted one at a time (``Producer.insert``: every row is a train of
one and moves the bound, so each result leaves as early as possible) and in trains of
``--train`` rows (``Producer.insert_many``: one pass through the dataflow per train, the way
SQLstream moves rows). Both include checking every row against the stream's heading and
numbering it; the deque program does neither. The peak-memory runs use trains.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import subprocess
import sys
import time
from collections import deque

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

QUERY = ("changes(summarizebyusing(window(restrict(s, gt(v, 10)), ts, range({T})), (k, during),"
         " (total(plus(v))), (during)), at)")


def events(n, seed=1):
    rnd = random.Random(seed)
    for i in range(n):
        yield i, rnd.randrange(100), rnd.randrange(100)


def run_sira(n, T, keep=False, train=1):
    import sira
    from sira.streams import StreamEngine
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": sira.INT, "v": sira.INT})
    q = engine.register(QUERY.format(T=T), keep=keep)  # keep=False: memory is the operators'
    p = s.attach()
    start = time.perf_counter()
    if train == 1:
        for t, k, v in events(n):
            p.insert({"k": k, "v": v}, t)
    else:
        batch = []
        for t, k, v in events(n):
            batch.append(({"k": k, "v": v}, t))
            if len(batch) == train:
                p.insert_many(batch)
                batch = []
        p.insert_many(batch)
    p.detach()
    engine.finish()
    return time.perf_counter() - start, q


def run_baseline(n, T, keep=False):
    """Per key: a deque of (expiry, v) and a running total; hands each change (at, kind, k,
    total) to a consumer (a list when ``keep``, else one that drops it, as sira's keep=False)."""
    start = time.perf_counter()
    windows, totals = {}, {}
    expiries = deque()  # (expiry time, key, v) in time order (one event per time unit)
    results = []
    out = results.append if keep else _drop
    for t, k, v in events(n):
        changed = {}
        while expiries and expiries[0][0] <= t:
            _, ek, ev = expiries.popleft()
            changed.setdefault(ek, totals[ek])
            totals[ek] -= ev
            windows[ek] -= 1
        if v > 10:
            changed.setdefault(k, totals.get(k))
            totals[k] = totals.get(k, 0) + v
            windows[k] = windows.get(k, 0) + 1
            expiries.append((t + T, k, v))
        for key, old in changed.items():
            new = totals[key] if windows.get(key) else None
            if new is None:
                totals.pop(key, None)
                windows.pop(key, None)
            if old != new:
                if old is not None:
                    out((t, "-", key, old))
                if new is not None:
                    out((t, "+", key, new))
    while expiries:  # end of input: the rest expires
        t, ek, ev = expiries.popleft()
        old = totals[ek]
        totals[ek] -= ev
        windows[ek] -= 1
        out((t, "-", ek, old))
        if windows[ek] == 0:
            del windows[ek], totals[ek]
        else:
            out((t, "+", ek, totals[ek]))
    return time.perf_counter() - start, results


def _drop(change):
    pass


def check(n, T, train):
    _, q = run_sira(n, T, keep=True, train=train)
    _, base = run_baseline(n, T, keep=True)
    got = {(r["at"], r["kind"], r["k"], r["total"]) for r in q.results()}
    assert got == set(base), "sira and the baseline disagree"


def peak_rss_mb(n, T, train):
    code = (f"import sys; sys.path.insert(0, {os.getcwd()!r}); sys.argv=['x'];"
            f"import benchmarks.live as b; b.run_sira({n}, {T}, train={train});"
            f"import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--T", type=int, default=1000)
    ap.add_argument("--train", type=int, default=1000, help="rows per insert_many train")
    ap.add_argument("--sizes", default="100000,200000,400000")
    args = ap.parse_args(argv)
    print(f"sira live benchmark; Python {platform.python_version()}, {platform.platform()}, "
          f"{os.cpu_count()} cpus")
    for train in (1, args.train):
        check(20_000, args.T, train)
    print(f"correctness: sira's changes equal the deque program's on 20,000 events "
          f"(row by row and in trains of {args.train})")
    base_s, _ = run_baseline(args.n, args.T)
    runs = [(f"sira, trains of {args.train}", run_sira(args.n, args.T, train=args.train)[0]),
            ("sira, row by row", run_sira(args.n, args.T, train=1)[0])]
    print(f"{'program':<24}{'events':>12}{'seconds':>10}{'events/s':>12}{'ratio':>8}")
    print(f"{'deque':<24}{args.n:>12,}{base_s:>10.2f}{args.n / base_s:>12,.0f}{1:>8.1f}")
    for name, sec in runs:
        ratio = sec / base_s
        print(f"{name:<24}{args.n:>12,}{sec:>10.2f}{args.n / sec:>12,.0f}{ratio:>8.1f}  "
              f"(target <= 3: {'PASS' if ratio <= 3 else 'OVER'})")
    print(f"peak memory, sira in trains of {args.train} (own process per size):")
    for size in [int(x) for x in args.sizes.split(",")]:
        print(f"  {size:>12,} events: {peak_rss_mb(size, args.T, args.train):8.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
