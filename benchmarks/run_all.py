"""Run every benchmark script in this directory (except this one), one after another.

    python benchmarks/run_all.py [ARGS...]

Each ``benchmarks/*.py`` is run as ``python file ARGS...`` with the same interpreter, in name
order, under a header. Exits non-zero if any script failed (a script that only reports, such as
core.py, exits 0).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    me = os.path.abspath(__file__)
    scripts = sorted(os.path.join(here, f) for f in os.listdir(here)
                     if f.endswith(".py") and not f.startswith("_")
                     and os.path.abspath(os.path.join(here, f)) != me)
    failed = []
    for script in scripts:
        name = os.path.relpath(script, os.path.dirname(here))
        banner = f"=== {name} {' '.join(argv)}".rstrip() + " ==="
        print("=" * len(banner))
        print(banner)
        print("=" * len(banner), flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, script, *argv])
        print(f"--- {name}: exit {rc}, {time.perf_counter() - t0:.1f}s ---\n", flush=True)
        if rc != 0:
            failed.append((name, rc))
    if failed:
        print("failed: " + ", ".join(f"{n} (exit {rc})" for n, rc in failed))
        return 1
    print(f"{len(scripts)} benchmark script(s) run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
