"""Interval benchmark: PACK against a plain-Python sweep, and the cost of interval length.

Inputs are built once with the trusted constructor ``Relation(heading, body)`` (not timed); only
``sira.evaluate(tree, relvars)`` is timed on the sira side, the tree built by the builder API.

    python benchmarks/intervals.py                    # n = 1,000,000, m = 100,000, best of 3
    python benchmarks/intervals.py --n 100000 --m 20000

Measurements:

1. PACK         R{k INT, during INTINTERVAL} (n tuples, about n/10 keys) packed on (during).
                Per key the intervals are a walk: each begins either inside or right at the end
                of everything before it (it overlaps or meets: merged) or after a gap (a new
                packed interval), with even odds, so the result holds about n/2 tuples.
                Baseline: plain Python sort-and-sweep (group by k, sort (begin, end) pairs,
                merge), producing the same set of tuples (asserted). Target: sira/baseline <= 2.
2. LENGTH       R{k, during TIMESTAMPINTERVAL, a} and S{k, during, b} (m tuples each, about m/10
                keys, so groups are small), the same integer layout mapped to timestamps twice:
                one unit = 1 microsecond (intervals about 10 microseconds long) and one unit =
                10^11 microseconds (intervals about 10^12 microseconds, ~11.6 days, long; starts
                spread over about 40 years). Timed: pack(R, (during)),
                joinusing(R, S, (during)) and minususing(R, S', (during)) (S' is S with b named
                a). Target: long/short <= 1.5 (cost must not depend on interval length). Check:
                each long result, mapped back to units, equals the short result mapped back.
3. PACK 2-D     R{k, x INTINTERVAL, y INTINTERVAL} (m tuples, about m/10 keys) packed on (x, y):
                time and rows/s only (no baseline); checked against unpack-to-points then
                pack on x then on y, on a sample of keys.

The script always exits 0: it is a report.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import math
import os
import platform
import random
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import sira  # noqa: E402
from benchmarks._common import best_time, best_time_pair  # noqa: E402
from sira import INT, INTINTERVAL, TIMESTAMPINTERVAL, Heading, Interval, Relation  # noqa: E402

PACK_TARGET = 2.0
LENGTH_TARGET = 1.5
EPOCH = datetime.datetime(1970, 1, 1)
LONG_UNIT = 10 ** 11  # microseconds per layout unit in the long run


def walk(rng: random.Random, start: int, count: int, min_len: int, max_len: int,
         max_gap: int) -> list:
    """``count`` (begin, end) pairs with strictly increasing begins. Each interval begins, with
    even odds, at or before the largest end so far (overlapping or meeting what came before, so
    PACK merges it) or 1..max_gap after it (starting a new packed interval)."""
    out = []
    reach = start  # the largest end so far
    prev_begin = start - 1
    for i in range(count):
        length = rng.randint(min_len, max_len)
        if i and rng.random() < 0.5:
            begin = rng.randint(prev_begin + 1, reach)  # overlaps or meets
        else:
            begin = reach + (rng.randint(1, max_gap) if i else 0)
        out.append((begin, begin + length))
        prev_begin = begin
        reach = max(reach, begin + length)
    return out


def group_sizes(rng: random.Random, total: int, groups: int) -> list:
    """``groups`` sizes around total/groups (at least 1 each), summing to ``total``."""
    groups = max(1, min(groups, total))
    mean = total / groups
    sizes = [max(1, round(rng.uniform(0.5, 1.5) * mean)) for _ in range(groups)]
    diff = total - sum(sizes)
    i = 0
    while diff:  # nudge sizes (never below 1) until they sum to total
        step = 1 if diff > 0 else -1
        if step > 0 or sizes[i % groups] > 1:
            sizes[i % groups] += step
            diff -= step
        i += 1
    return sizes


# --- 1. PACK against the sort-and-sweep baseline ---------------------------------------------

def build_pack(n: int, rng: random.Random):
    heading = Heading.of({"k": INT, "during": INTINTERVAL})
    assert heading.names == ("during", "k")  # body tuples are (during, k)
    body = []
    for k, size in enumerate(group_sizes(rng, n, max(1, n // 10))):
        start = rng.randrange(1_000_000)
        body.extend((Interval(b, e), k) for b, e in walk(rng, start, size, 1, 20, 10))
    r = Relation(heading, frozenset(body))
    assert len(r.body) == n
    return heading, r


def case_pack(n: int, rng: random.Random):
    heading, r = build_pack(n, rng)
    relvars = {"r": r}
    tree = sira.relvar("r", heading).pack("during")

    def run_sira():
        return sira.evaluate(tree, relvars).body

    def run_baseline():
        groups = {}
        get = groups.get
        for iv, k in r.body:
            lst = get(k)
            if lst is None:
                groups[k] = [(iv.begin, iv.end)]
            else:
                lst.append((iv.begin, iv.end))
        out = set()
        add = out.add
        for k, ivs in groups.items():
            ivs.sort()
            cb, ce = ivs[0]
            for b, e in ivs:
                if b <= ce:
                    if e > ce:
                        ce = e
                else:
                    add((Interval(cb, ce), k))
                    cb, ce = b, e
            add((Interval(cb, ce), k))
        return out

    return run_sira, run_baseline


# --- 2. the same operations on short and on long timestamp intervals -------------------------

def build_length_layout(m: int, rng: random.Random):
    """Integer layouts: R rows (a, (begin, end), k) and S rows (b, (begin, end), k), in units."""
    keys = max(1, m // 10)
    r_rows, s_rows = [], []
    spread = 12_600  # unit offsets of the keys' first begins: ~40 years in the long run
    for k, (r_size, s_size) in enumerate(zip(group_sizes(rng, m, keys),
                                             group_sizes(rng, m, keys))):
        start = rng.randrange(spread)
        for b, e in walk(rng, start, r_size, 5, 15, 10):
            r_rows.append((rng.randrange(2), (b, e), k))
        for b, e in walk(rng, start + rng.randrange(20), s_size, 5, 15, 10):
            s_rows.append((rng.randrange(2), (b, e), k))
    return r_rows, s_rows


def to_timestamps(rows, unit_us: int) -> frozenset:
    unit = datetime.timedelta(microseconds=unit_us)
    return frozenset((x, Interval(EPOCH + b * unit, EPOCH + e * unit), k)
                     for x, (b, e), k in rows)


def to_units(body, pos: int, unit_us: int) -> frozenset:
    """A result body with the timestamp interval at ``pos`` mapped back to layout units."""
    unit = datetime.timedelta(microseconds=unit_us)
    out = set()
    for row in body:
        iv = row[pos]
        b, rb = divmod(iv.begin - EPOCH, unit)
        e, re_ = divmod(iv.end - EPOCH, unit)
        assert not rb and not re_, (iv, unit_us)  # boundaries are always input boundaries
        out.add(row[:pos] + ((b, e),) + row[pos + 1:])
    return frozenset(out)


def length_cases(m: int, rng: random.Random):
    """[(label, sira_fn_short, sira_fn_long, position of the interval in result rows)]."""
    r_heading = Heading.of({"k": INT, "during": TIMESTAMPINTERVAL, "a": INT})
    s_heading = Heading.of({"k": INT, "during": TIMESTAMPINTERVAL, "b": INT})
    assert r_heading.names == ("a", "during", "k") and s_heading.names == ("b", "during", "k")
    r_rows, s_rows = build_length_layout(m, rng)
    relvars = {}
    for name, unit in (("short", 1), ("long", LONG_UNIT)):
        r = Relation(r_heading, to_timestamps(r_rows, unit))
        s = Relation(s_heading, to_timestamps(s_rows, unit))
        s_as_a = Relation(r_heading, s.body)  # S' = S with b named a (same tuple layout)
        assert len(r.body) == len(r_rows) and len(s.body) == len(s_rows)
        relvars[name] = {"r": r, "s": s, "t": s_as_a}
    r = sira.relvar("r", r_heading)
    s = sira.relvar("s", s_heading)
    t = sira.relvar("t", r_heading)
    join_tree = attr_evolve(r.join(s), using=("during",))
    minus_tree = attr_evolve(r.minus(t), using=("during",))
    assert join_tree.heading.names == ("a", "b", "during", "k")
    cases = []
    for label, tree, pos in (("PACK", r.pack("during"), 1),
                             ("JOINUSING (during)", join_tree, 2),
                             ("MINUSUSING (during)", minus_tree, 1)):
        def run(which, tree=tree):
            rv = relvars[which]
            return lambda: sira.evaluate(tree, rv).body
        cases.append((label, run("short"), run("long"), pos))
    return cases


def attr_evolve(node, **changes):
    import attrs
    return attrs.evolve(node, **changes)


# --- 3. PACK on two attributes ---------------------------------------------------------------

def build_pack2(m: int, rng: random.Random):
    """R{k, x, y}: per key, x is a walk (as in 1.) and y a coarse version period: it begins at
    a multiple of 10 among the first few and lasts 10 or 20, so tuples overlap in both."""
    heading = Heading.of({"k": INT, "x": INTINTERVAL, "y": INTINTERVAL})
    assert heading.names == ("k", "x", "y")
    body = set()
    for k, size in enumerate(group_sizes(rng, m, max(1, m // 10))):
        start = rng.randrange(1_000_000)
        for b, e in walk(rng, start, size, 2, 20, 10):
            yb = 10 * rng.randrange(4)
            body.add((k, Interval(b, e), Interval(yb, yb + 10 * rng.randint(1, 2))))
    return heading, Relation(heading, frozenset(body))


def pack2_by_points(rows) -> frozenset:
    """Definition: unpack on x and y, pack on x, then pack on y (rows (k, x, y))."""
    points = {(k, px, py) for k, x, y in rows for px in range(x.begin, x.end)
              for py in range(y.begin, y.end)}

    def pack_on(items, key_of, point_of, make):  # merge consecutive points per key
        groups = {}
        for it in items:
            groups.setdefault(key_of(it), []).append(point_of(it))
        out = set()
        for key, pts in groups.items():
            pts.sort()
            run_b = prev = pts[0]
            for p in pts[1:]:
                if p != prev + 1:
                    out.add(make(key, run_b, prev + 1))
                    run_b = p
                prev = p
            out.add(make(key, run_b, prev + 1))
        return out

    # pack on x: key (k, py) -> {(k, X, py)}; then on y: key (k, X) -> {(k, X, Y)}
    on_x = pack_on(points, lambda t: (t[0], t[2]), lambda t: t[1],
                   lambda key, b, e: (key[0], Interval(b, e), key[1]))
    on_y = pack_on(on_x, lambda t: (t[0], t[1]), lambda t: t[2],
                   lambda key, b, e: (key[0], key[1], Interval(b, e)))
    return frozenset(on_y)


# --- main ------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000,
                        help="tuples for the PACK-vs-baseline case (default 1,000,000)")
    parser.add_argument("--m", type=int, default=100_000,
                        help="tuples per relation for the length and 2-D PACK cases "
                             "(default 100,000)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per measurement; the best is reported (default 3)")
    parser.add_argument("--seed", type=int, default=2024, help="random seed for the inputs")
    parser.add_argument("--no-gc", action="store_true",
                        help="disable the cyclic garbage collector while timing (both sides)")
    parser.add_argument("--only", default=None,
                        help="comma-separated subset: pack,length,pack2 (names of other "
                             "benchmarks' cases are ignored, for run_all.py)")
    args = parser.parse_args(argv)
    n, m, repeat = max(1, args.n), max(1, args.m), max(1, args.repeat)
    only = None if args.only is None else {s.strip().lower() for s in args.only.split(",")}

    def wanted(name):
        return only is None or name in only

    print(f"sira {sira.__version__} interval benchmark: n={n:,}, m={m:,}, best of {repeat}, "
          f"gc {'off' if args.no_gc else 'on'} while timing (sira pauses it itself)")
    print(f"Python {platform.python_version()} ({platform.python_implementation()}, "
          f"{' '.join(platform.python_build())})")
    print(f"machine: {platform.platform()}, {platform.machine()}, "
          f"processor '{platform.processor() or 'unknown'}', cpu count {os.cpu_count()}")
    print()

    # warm-up, not timed: load the engine's modules and compile its helpers on tiny inputs
    try:
        warm = random.Random(0)
        case_pack(100, warm)[0]()
        for _, short, long_, _ in length_cases(100, warm):
            short(), long_()
        heading, r = build_pack2(100, warm)
        sira.evaluate(sira.relvar("r", heading).pack("x", "y"), {"r": r})
    except Exception:
        traceback.print_exc()

    tables = []

    # 1. PACK vs baseline
    def section_pack():
        rng = random.Random(args.seed)
        t0 = time.perf_counter()
        run_sira, run_baseline = case_pack(n, rng)
        build = time.perf_counter() - t0
        header = (f"{'operation':<32} {'n':>10} {'result rows':>12} {'sira s':>9} "
                  f"{'baseline s':>10} {'sira rows/s':>12} {'ratio':>6} {'target':>7}  verdict")
        lines = []
        # the headline row times as core.py does (gc as the options say; sira pauses it during
        # evaluation itself, the baseline does not); unless --no-gc, a second row pauses the
        # collector around both sides, so the sweep is not charged for collections either
        for gc_off in ([True] if args.no_gc else [False, True]):
            sira_s, sira_body = best_time(run_sira, repeat, gc_off)
            base_s, base_set = best_time(run_baseline, repeat, gc_off)
            assert isinstance(sira_body, frozenset), type(sira_body)
            assert sira_body == base_set, (f"PACK: sira and the baseline disagree "
                                           f"({len(sira_body):,} vs {len(base_set):,} tuples)")
            rows_out = len(sira_body)
            sira_body = base_set = None
            ratio = sira_s / base_s if base_s > 0 else math.inf
            label = "PACK (during) vs sweep" + (" [gc off]" if gc_off else "")
            lines.append(f"{label:<32} {n:>10,} {rows_out:>12,} {sira_s:>9.3f} "
                         f"{base_s:>10.3f} {n / sira_s:>12,.0f} {ratio:>6.2f} "
                         f"{'<= ' + format(PACK_TARGET, 'g'):>7}  "
                         f"{'PASS' if ratio <= PACK_TARGET else 'OVER'}")
            print(f"  [PACK{' [gc off]' if gc_off else ''}: input built in {build:.1f}s; "
                  f"results equal ({rows_out:,} tuples, {rows_out / n:.0%} of the input)]",
                  flush=True)
        tables.append(("1. PACK on one interval attribute, against plain-Python sort-and-sweep",
                       header, lines,
                       "ratio: sira seconds / baseline seconds; both produce the same set of "
                       "tuples. sira rows/s: input tuples per second. [gc off]: the cyclic "
                       "collector paused around both sides (sira.evaluate pauses it itself).\n"
                       "Baseline: group (begin, end) pairs by k, sort, sweep, build Interval "
                       "result tuples."))
        del run_sira, run_baseline
        gc.collect()

    # 2. interval length
    def section_length():
        rng = random.Random(args.seed + 1)
        t0 = time.perf_counter()
        cases = length_cases(m, rng)
        print(f"  [LENGTH: inputs built in {time.perf_counter() - t0:.1f}s (2 x 3 relations of "
              f"~{m:,} tuples)]", flush=True)
        header = (f"{'operation (m tuples each)':<32} {'m':>10} {'result rows':>12} "
                  f"{'short s':>9} {'long s':>10} {'long/short':>10} {'target':>7}  verdict")
        lines = []
        for label, run_short, run_long, pos in cases:
            short_s, long_s, short_body, long_body = best_time_pair(run_short, run_long,
                                                                    repeat, args.no_gc)
            assert len(short_body) == len(long_body), (
                f"{label}: short and long results differ in size "
                f"({len(short_body):,} vs {len(long_body):,})")
            assert to_units(short_body, pos, 1) == to_units(long_body, pos, LONG_UNIT), (
                f"{label}: the long result is not the short result scaled")
            ratio = long_s / short_s if short_s > 0 else math.inf
            lines.append(f"{label:<32} {m:>10,} {len(short_body):>12,} {short_s:>9.3f} "
                         f"{long_s:>10.3f} {ratio:>10.2f} "
                         f"{'<= ' + format(LENGTH_TARGET, 'g'):>7}  "
                         f"{'PASS' if ratio <= LENGTH_TARGET else 'OVER'}")
            print(f"  [{label}: short and long results equal up to scale "
                  f"({len(short_body):,} tuples)]", flush=True)
            del short_body, long_body
            gc.collect()
        tables.append(("2. Interval length: TIMESTAMP intervals ~10 us long vs the same layout "
                       "scaled x10^11 (~10^12 us, ~11.6 days)",
                       header, lines,
                       "long/short: seconds on long intervals / seconds on short ones; the "
                       "results are the same up to the scale (checked)."))
        del cases
        gc.collect()

    # 3. PACK on two attributes
    def section_pack2():
        rng = random.Random(args.seed + 2)
        t0 = time.perf_counter()
        heading, r = build_pack2(m, rng)
        from sira.engine.basic import row_getter
        from sira.engine.packing import split_bodies
        split_rows = len(split_bodies([r.body], [[1, 2]], [row_getter([0])])[0])
        print(f"  [PACK (x, y): input built in {time.perf_counter() - t0:.1f}s "
              f"({len(r.body):,} tuples, {split_rows:,} after splitting)]", flush=True)
        tree = sira.relvar("r", heading).pack("x", "y")
        relvars = {"r": r}
        sira_s, body = best_time(lambda: sira.evaluate(tree, relvars).body, repeat, args.no_gc)
        sample = set(random.Random(args.seed).sample(range(max(1, m // 10)),
                                                     min(300, max(1, m // 10))))
        expected = pack2_by_points(row for row in r.body if row[0] in sample)
        got = frozenset(row for row in body if row[0] in sample)
        assert got == expected, f"PACK (x, y): wrong on sampled keys ({len(got)} vs " \
                                f"{len(expected)} tuples)"
        print(f"  [PACK (x, y): {len(sample)} sampled keys equal the unpack/pack definition "
              f"({len(got):,} tuples)]", flush=True)
        header = (f"{'operation':<32} {'m':>10} {'result rows':>12} {'split rows':>10} "
                  f"{'sira s':>9} {'sira rows/s':>12}")
        line = (f"{'PACK (x, y)':<32} {len(r.body):>10,} {len(body):>12,} {split_rows:>10,} "
                f"{sira_s:>9.3f} {len(r.body) / sira_s:>12,.0f}")
        tables.append(("3. PACK on two interval attributes (no baseline)", header, [line],
                       "split rows: tuples after cutting every interval at its group's "
                       "boundaries (the intermediate PACK works on). rows/s: input tuples per "
                       "second."))
        del body, r
        gc.collect()

    for name, section in (("pack", section_pack), ("length", section_length),
                          ("pack2", section_pack2)):
        if not wanted(name):
            continue
        try:
            section()
        except Exception:  # a report: show the failure, go on with the other measurements
            traceback.print_exc()
            tables.append((f"{name}: FAILED (see the traceback above)", "", [], ""))
        gc.collect()

    for title, header, lines, note in tables:
        print()
        print(title)
        if header:
            print(header)
            print("-" * len(header))
        for line in lines:
            print(line)
        if note:
            print(note)
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
