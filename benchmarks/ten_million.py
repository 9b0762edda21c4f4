"""Issue 18, point 3: every family of ``benchmarks/scaling.py`` over 10,000,000 tuples in one
sequence (the ``one`` shape, or the family's first shape where it has none) on Spark local[2]
with the default driver memory: does it complete, in how long, at what peak memory of the
Python driver. Each run is a new process (``scaling.in_process``).

    python benchmarks/ten_million.py [--n 10000000] [--families a,b] [--timeout 1800]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.scaling import FAMILIES, in_process  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--families", default="", help="comma-separated (default: all)")
    ap.add_argument("--engine", default="spark")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--max-tuples", type=int, default=None,
                    help="the guard's limit (default 50,000,000; JOINUSING makes 7n tuples)")
    args = ap.parse_args(argv)
    families = args.families.split(",") if args.families else list(FAMILIES)
    print(f"{args.n:,} tuples in one sequence, engine {args.engine}, {os.cpu_count()} cpus")
    print(f"{'family':<32}{'shape':<10}{'seconds':>10}{'MiB':>8}{'rows/s':>12}")
    failed = 0
    for family in families:
        shapes = FAMILIES[family][1]
        shape = "one" if "one" in shapes else shapes[0]
        r = in_process(args.engine, family, shape, args.n, args.timeout, args.max_tuples)
        if "error" in r:
            failed += 1
            print(f"{family:<32}{shape:<10}  {r['error']}", flush=True)
            continue
        print(f"{family:<32}{shape:<10}{r['seconds']:>10.1f}{r['peak_mib']:>8.0f}"
              f"{args.n / r['seconds']:>12,.0f}", flush=True)
    print(f"{len(families) - failed} of {len(families)} families completed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
