"""Core operator benchmark: the Python engine against plain-Python baselines doing the same work.

For each operation the inputs are built once with the trusted constructor ``Relation(heading,
body)`` (not timed). Only ``sira.evaluate(tree, relvars)`` is timed on the sira side, with the
tree built by the builder API; the baseline is ordinary Python over the same frozenset bodies.
Both must produce the same set of result tuples (asserted), so the ratio compares equal work.

    python benchmarks/core.py              # 1,000,000-tuple inputs, best of 3
    python benchmarks/core.py --n 100000   # scaled down

Operations (n = tuples per input relation):

1. JOIN         R{k, a} (n) join S{k, b} (n), k unique on both sides: n results.
                Baseline: dict hash join (k -> b, k being unique) into a set of (a, b, k); a
                second row compares with the general form (k -> list of b), the work sira does.
2. PROJECT      R{a, b, c} (n) on (a, b), about 10% distinct. Baseline: set comprehension.
3. SUMMARIZEBY  R{g, v} (n), 1,000 groups, summarizeby(R, (g), (s(plus(v)))).
                Baseline: dict accumulation, then a set of (g, s) tuples.
4. TCLOSE       chain of round(sqrt(n)) nodes (1,000 at n = 1M), edges i -> i+1, closure
                nodes*(nodes-1)/2 pairs (499,500 at n = 1M). Baseline: semi-naive loop over
                sets of pairs with a successor dict.

The ratio is sira / baseline; the target is <= 3. The script always exits 0: it is a report.
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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import sira  # noqa: E402
from benchmarks._common import best_time  # noqa: E402
from sira import INT, Heading, Relation, attr  # noqa: E402

TARGET = 3.0


# --- the four cases: each returns (label, n, rows_for_rate, sira_fn, baseline_fn) -----------
# baseline_fn may instead be a list of (label suffix, fn): one table row per baseline, all
# against the same sira timing; the first is the headline baseline.

def case_join(n: int, rng: random.Random):
    # R{a, k}: body tuples are (a, k) (attributes in sorted order); S{b, k}: (b, k).
    r_heading = Heading.of({"k": INT, "a": INT})
    s_heading = Heading.of({"k": INT, "b": INT})
    keys = list(range(n))
    a_vals = [rng.randrange(1_000_000) for _ in keys]
    b_vals = [rng.randrange(1_000_000) for _ in keys]
    r = Relation(r_heading, frozenset(zip(a_vals, keys)))
    s = Relation(s_heading, frozenset(zip(b_vals, keys)))
    del a_vals, b_vals, keys
    relvars = {"r": r, "s": s}
    tree = sira.relvar("r", r_heading).join(sira.relvar("s", s_heading))
    assert tree.heading.names == ("a", "b", "k")

    def run_sira():
        return sira.evaluate(tree, relvars).body

    def run_baseline():
        # k is unique in S, so the index maps k -> b directly.
        index = {k: b for b, k in s.body}
        return {(a, index[k], k) for a, k in r.body if k in index}

    def run_general_baseline():
        # the same join without relying on unique keys: k -> list of b (the work sira does).
        index = {}
        for b, k in s.body:
            index.setdefault(k, []).append(b)
        return {(a, b, k) for a, k in r.body for b in index.get(k, ())}

    return "JOIN", n, n, run_sira, [("", run_baseline),
                                    (" (vs k->[b])", run_general_baseline)]


def case_project(n: int, rng: random.Random):
    # R{a, b, c}: body tuples (a, b, c); c makes every tuple distinct, (a, b) takes n/10 values.
    heading = Heading.of({"a": INT, "b": INT, "c": INT})
    distinct = max(1, n // 10)
    body = set()
    for c in range(n):
        p = rng.randrange(distinct) if c >= distinct else c  # every pair appears at least once
        body.add((p % 1000, p // 1000, c))
    r = Relation(heading, frozenset(body))
    del body
    relvars = {"r": r}
    tree = sira.relvar("r", heading).project("a", "b")
    assert tree.heading.names == ("a", "b")

    def run_sira():
        return sira.evaluate(tree, relvars).body

    def run_baseline():
        return {(a, b) for a, b, c in r.body}

    return "PROJECT (dedup)", n, n, run_sira, run_baseline


def case_summarizeby(n: int, rng: random.Random):  # noqa: ARG001 (deterministic)
    # R{g, v}: body tuples (g, v); 1,000 groups of n/1,000 tuples each, v = 0 .. n/1,000 - 1
    # within a group (every tuple distinct; each sum, 499,500 at n = 1M, fits INT).
    heading = Heading.of({"g": INT, "v": INT})
    groups = min(1000, n)
    r = Relation(heading, frozenset((i % groups, i // groups) for i in range(n)))
    relvars = {"r": r}
    tree = sira.relvar("r", heading).summarizeby(("g",), s=("plus", attr("v")))
    assert tree.heading.names == ("g", "s")

    def run_sira():
        return sira.evaluate(tree, relvars).body

    def run_baseline():
        acc = {}
        get = acc.get
        for g, v in r.body:
            acc[g] = get(g, 0) + v
        return set(acc.items())

    return "SUMMARIZEBY plus", n, n, run_sira, run_baseline


def case_tclose(n: int, rng: random.Random):
    # Chain of `nodes` nodes: R{a, b} with edges (i, i+1); body tuples (a, b).
    nodes = max(2, round(math.sqrt(n)))
    heading = Heading.of({"a": INT, "b": INT})
    r = Relation(heading, frozenset((i, i + 1) for i in range(nodes - 1)))
    relvars = {"r": r}
    tree = sira.relvar("r", heading).tclose(("a", "b"))
    closure_size = nodes * (nodes - 1) // 2

    def run_sira():
        return sira.evaluate(tree, relvars).body

    def run_baseline():
        successors = {}
        for a, b in r.body:
            successors.setdefault(a, []).append(b)
        closure = set(r.body)
        delta = closure.copy()
        while delta:
            fresh = set()
            for a, b in delta:
                for c in successors.get(b, ()):
                    if (a, c) not in closure:
                        fresh.add((a, c))
            closure |= fresh
            delta = fresh
        return closure

    return f"TCLOSE chain ({nodes} nodes)", nodes, closure_size, run_sira, run_baseline


CASES = (case_join, case_project, case_summarizeby, case_tclose)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000,
                        help="tuples per input relation (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per measurement; the best is reported (default 3)")
    parser.add_argument("--seed", type=int, default=2024, help="random seed for the inputs")
    parser.add_argument("--no-gc", action="store_true",
                        help="disable the cyclic garbage collector while timing (both sides)")
    parser.add_argument("--only", default=None,
                        help="comma-separated subset: join,project,summarizeby,tclose")
    args = parser.parse_args(argv)
    n, repeat = max(1, args.n), max(1, args.repeat)

    print(f"sira {sira.__version__} core benchmark: n={n:,}, best of {repeat}, "
          f"gc {'off' if args.no_gc else 'on'} while timing")
    print(f"Python {platform.python_version()} ({platform.python_implementation()}, "
          f"{' '.join(platform.python_build())})")
    print(f"machine: {platform.platform()}, {platform.machine()}, "
          f"processor '{platform.processor() or 'unknown'}', cpu count {os.cpu_count()}")
    print()

    only = None if args.only is None else {s.strip().lower() for s in args.only.split(",")}
    header = (f"{'operation':<26} {'n':>10} {'result rows':>12} {'sira s':>9} "
              f"{'baseline s':>10} {'sira rows/s':>12} {'ratio':>6} {'target':>7}  verdict")
    rows = []
    rng = random.Random(args.seed)
    for case in CASES:
        name = case.__name__.removeprefix("case_")
        if only is not None and name not in only:
            continue
        # warm-up, not timed: the first evaluation of an operator loads modules and compiles
        # the engine's helpers; run the same case once on a tiny input.
        case(min(n, 100), random.Random(0))[3]()
        t0 = time.perf_counter()
        label, size, rate_rows, run_sira, run_baseline = case(n, rng)
        build = time.perf_counter() - t0
        baselines = run_baseline if isinstance(run_baseline, list) else [("", run_baseline)]
        sira_s, sira_body = best_time(run_sira, repeat, args.no_gc)
        assert isinstance(sira_body, frozenset), type(sira_body)
        result_rows = len(sira_body)
        for suffix, fn in baselines:
            base_s, base_set = best_time(fn, repeat, args.no_gc)
            assert sira_body == base_set, (f"{label}{suffix}: sira and the baseline disagree "
                                           f"({len(sira_body)} vs {len(base_set)} tuples)")
            base_set = None
            ratio = sira_s / base_s if base_s > 0 else math.inf
            verdict = "PASS" if ratio <= TARGET else "OVER"
            rows.append(f"{label + suffix:<26} {size:>10,} {result_rows:>12,} {sira_s:>9.3f} "
                        f"{base_s:>10.3f} {rate_rows / sira_s:>12,.0f} {ratio:>6.2f} "
                        f"{'<= ' + format(TARGET, 'g'):>7}  {verdict}")
        print(f"  [{label}: inputs built in {build:.1f}s, results equal "
              f"({result_rows:,} tuples)]", flush=True)
        del sira_body, run_sira, run_baseline, baselines, fn
        gc.collect()

    print()
    print(header)
    print("-" * len(header))
    for line in rows:
        print(line)
    print()
    print("n: tuples per input relation (TCLOSE: chain nodes). sira rows/s: input tuples per "
          "second (TCLOSE: closure tuples per second).")
    print("ratio: sira seconds / baseline seconds; both produce the same set of tuples.")
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
