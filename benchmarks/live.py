"""Live streams: events through a filter, S[range T] and a per-key sum, on the incremental runtime
beside a plain-Python deque program producing the same changes, and the peak memory at growing
input sizes (each size and way of inserting in its own process, peak RSS).

    python benchmarks/live.py                      # 200,000 events; memory at 100k/200k/400k;
                                                   # SPL and WindowBy windows at 1,000,000
    python benchmarks/live.py --n 10000000 --sizes 1000000,5000000,10000000

The query: changes(summarizebyusing(window(restrict(s, gt(v, 10)), ts, range(1000)),
(k, during), (total(plus(v))), (during)), at) with 100 keys and one event per time unit. It
runs fused (sira.streams.fused); ``--unfused`` times it operator by operator as well.

sira is timed twice: rows inserted one at a time (``Producer.insert``: every row is a train of
one and moves the bound, so each result leaves as early as possible) and in trains of
``--train`` rows (``Producer.insert_many``: one pass through the dataflow per train, the way
SQLstream moves rows). Both include checking every row against the stream's heading, numbering
it, the query's position and lateness checks, and building every result row (at, k, kind,
total), which the query's sink drops (``keep=False``: memory stays that of the operators'
state), as the deque program hands each change to a consumer that drops it; the deque program
checks and numbers nothing. Times are CPU seconds of this process (``time.process_time``), so
other load on a shared machine counts less; both sides run with the garbage collector on (sira
pauses it while a train passes, as its batch engine does while it evaluates).
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


def run_sira(n, T, keep=False, train=1, fuse=True):
    """sira on the benchmark's QUERY over ``n`` events; (CPU seconds, query)."""
    seconds, q = run_sira_query(QUERY.format(T=T), n, train=train, keep=keep, fuse=fuse)
    assert q.fused == fuse
    return seconds, q


def run_baseline(n, T, keep=False):
    """Per key: a deque of (expiry, v) and a running total; hands each change (at, kind, k,
    total) to a consumer (a list when ``keep``, else one that drops it, as sira's keep=False)."""
    start = time.process_time()
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
    return time.process_time() - start, results


def _drop(change):
    pass


# ------------------------------------------------------------------ SPL and WindowBy windows

SPL = ("project(extend(splwindow(s, ts, sliding, count(10) trigger(count(5)) partitioned(k)),"
       " (total(sum(tuples, v)))), (k, instance, at, total))")
SESSIONS = ("project(windowby(s, partition(k) order(ts) tumbling, start(as(a) at(sp)),"
            " end(as(b) at(ep) next(nx) when(or(is_missing(nx), gt(minus(nx.ts, b.ts), {G})))),"
            " aggregates(total(sum(w, v)) n(count(w)))), (k, sp, ep, total, n))")


def run_sira_query(text, n, train=1000, keep=False, fuse=True):
    """sira on ``text`` over the benchmark's events, row by row (``train`` 1) or in trains;
    (CPU seconds, query). ``keep=False``: memory is the operators'."""
    import sira
    from sira.streams import StreamEngine
    engine = StreamEngine(fuse=fuse)
    s = engine.create_stream("s", {"k": sira.INT, "v": sira.INT})
    q = engine.register(text, keep=keep)
    p = s.attach()
    start = time.process_time()
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
    return time.process_time() - start, q


def run_spl_baseline(n, keep=False):
    """Per key a deque of the last 10 values and a count: every 5th tuple of a key hands (k,
    instance, at, sum of the deque) to the consumer."""
    start = time.process_time()
    windows, counts, instances = {}, {}, {}
    results = []
    out = results.append if keep else _drop
    for t, k, v in events(n):
        w = windows.get(k)
        if w is None:
            w = windows[k] = deque(maxlen=10)
        w.append(v)
        c = counts.get(k, 0) + 1
        if c == 5:
            c = 0
            instances[k] = i = instances.get(k, 0) + 1
            out((k, i, t, sum(w)))
        counts[k] = c
    return time.process_time() - start, results


def run_sessions_baseline(n, G, keep=False):
    """Per key the open session (first position, last ts, position, sum, count): a tuple more
    than G after the key's last one hands the session to the consumer; the end flushes."""
    start = time.process_time()
    sessions = {}  # k -> [start position, last ts, position, total, n]
    results = []
    out = results.append if keep else _drop
    for t, k, v in events(n):
        s = sessions.get(k)
        if s is None:
            sessions[k] = [1, t, 1, v, 1]
        elif t - s[1] > G:
            out((k, s[0], s[2], s[3], s[4]))
            p = s[2] + 1
            sessions[k] = [p, t, p, v, 1]
        else:
            s[1] = t
            s[2] += 1
            s[3] += v
            s[4] += 1
    for k, s in sessions.items():
        out((k, s[0], s[2], s[3], s[4]))
    return time.process_time() - start, results


def check_windows(n, G):
    _, q = run_sira_query(SPL, n, keep=True)
    _, base = run_spl_baseline(n, keep=True)
    assert {(r["k"], r["instance"], r["at"], r["total"]) for r in q.results()} == set(base), \
        "SPL: sira and the baseline disagree"
    _, q = run_sira_query(SESSIONS.format(G=G), n, keep=True)
    _, base = run_sessions_baseline(n, G, keep=True)
    assert {(r["k"], r["sp"], r["ep"], r["total"], r["n"]) for r in q.results()} == set(base), \
        "WindowBy sessions: sira and the baseline disagree"


def check(n, T, train, fuse=True):
    _, q = run_sira(n, T, keep=True, train=train, fuse=fuse)
    _, base = run_baseline(n, T, keep=True)
    got = {(r["at"], r["kind"], r["k"], r["total"]) for r in q.results()}
    assert got == set(base), "sira and the baseline disagree"


def peak_rss_mb(n, T, train):
    """The peak resident memory of a new process running sira on ``n`` events: VmHWM (the
    high-water mark of this process's own memory; ``ru_maxrss`` may carry the parent's over
    exec on Linux), or ``ru_maxrss`` where /proc is missing."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    code = (f"import sys; sys.path.insert(0, {root!r}); sys.argv=['x'];"
            f"import benchmarks.live as b; from benchmarks._common import own_peak_kib;"
            f"b.run_sira({n}, {T}, train={train});"
            f"print(own_peak_kib())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--T", type=int, default=1000)
    ap.add_argument("--train", type=int, default=1000, help="rows per insert_many train")
    ap.add_argument("--sizes", default="100000,200000,400000")
    ap.add_argument("--unfused", action="store_true",
                    help="also time the query operator by operator (StreamEngine(fuse=False))")
    ap.add_argument("--windows", type=int, default=1_000_000,
                    help="events for the SPL count window and the WindowBy sessions (0: skip)")
    ap.add_argument("--gap", type=int, default=150, help="the sessions' gap")
    args = ap.parse_args(argv)
    print(f"sira live benchmark; Python {platform.python_version()}, {platform.platform()}, "
          f"{os.cpu_count()} cpus; CPU seconds (time.process_time)")
    modes = [True, False] if args.unfused else [True]
    for fuse in modes:
        for train in (1, args.train):
            check(20_000, args.T, train, fuse)
    print(f"correctness: sira's changes equal the deque program's on 20,000 events "
          f"(row by row and in trains of {args.train}{', fused and not' if args.unfused else ''})")
    base_s, _ = run_baseline(args.n, args.T)
    runs = []
    for fuse in modes:
        how = "" if fuse else ", unfused"
        runs.append((f"sira, trains of {args.train}{how}",
                     run_sira(args.n, args.T, train=args.train, fuse=fuse)[0]))
        runs.append((f"sira, row by row{how}", run_sira(args.n, args.T, train=1, fuse=fuse)[0]))
    print(f"{'program':<34}{'events':>12}{'seconds':>10}{'events/s':>12}{'ratio':>8}")
    print(f"{'deque':<34}{args.n:>12,}{base_s:>10.2f}{args.n / base_s:>12,.0f}{1:>8.1f}")
    for name, sec in runs:
        ratio = sec / base_s
        print(f"{name:<34}{args.n:>12,}{sec:>10.2f}{args.n / sec:>12,.0f}{ratio:>8.2f}  "
              f"(target <= 3: {'PASS' if ratio <= 3 else 'OVER'})")
    if args.windows:
        check_windows(20_000, args.gap)
        print("correctness: the SPL window's and the sessions' results equal the loops' on "
              "20,000 events")
        print(f"{'query (trains of 1000)':<34}{'events':>12}{'seconds':>10}{'events/s':>12}"
              f"{'ratio':>8}")
        for name, text, baseline in (
                ("SPL sliding count(10) per key", SPL, lambda: run_spl_baseline(args.windows)),
                (f"WindowBy sessions, gap {args.gap}", SESSIONS.format(G=args.gap),
                 lambda: run_sessions_baseline(args.windows, args.gap))):
            base, _ = baseline()
            sec, _ = run_sira_query(text, args.windows)
            print(f"{name + ': loop':<34}{args.windows:>12,}{base:>10.2f}"
                  f"{args.windows / base:>12,.0f}{1:>8.1f}")
            print(f"{name + ': sira':<34}{args.windows:>12,}{sec:>10.2f}"
                  f"{args.windows / sec:>12,.0f}{sec / base:>8.2f}  "
                  f"(target <= 3: {'PASS' if sec / base <= 3 else 'OVER'})")
    print("peak memory (own process per size and way of inserting, fused, keep=False):")
    for size in [int(x) for x in args.sizes.split(",")]:
        trains = peak_rss_mb(size, args.T, args.train)
        rows = peak_rss_mb(size, args.T, 1)
        print(f"  {size:>12,} events: trains of {args.train} {trains:8.1f} MiB, "
              f"row by row {rows:8.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
