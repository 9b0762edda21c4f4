"""Timing helpers shared by the Python-engine benchmarks.

    >>> seconds, value = best_time(lambda: sum(range(10)), repeat=2, gc_off=True)
    >>> value
    45
"""

from __future__ import annotations

import gc
import math
import time


def own_peak_kib() -> int:
    """This process's peak resident memory in KiB: VmHWM (its own high-water mark;
    ``ru_maxrss`` may carry the parent's over exec on Linux), or ``ru_maxrss`` where /proc is
    missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def best_time(fn, repeat: int, gc_off: bool):
    """(best seconds over ``repeat`` runs, result of the last run); the cyclic GC is paused
    during each run when ``gc_off`` (the Python engine pauses it itself)."""
    best = math.inf
    result = None
    for _ in range(repeat):
        result = None  # free the previous result before timing again
        gc.collect()
        if gc_off:
            gc.disable()
        try:
            t0 = time.perf_counter()
            result = fn()
            elapsed = time.perf_counter() - t0
        finally:
            if gc_off:
                gc.enable()
        best = min(best, elapsed)
    return best, result


def best_time_pair(fn_a, fn_b, repeat: int, gc_off: bool):
    """Best-of-``repeat`` for two functions, runs interleaved (a, b, a, b, ...) so that drift in
    machine speed hits both alike. Returns (best a, best b, last result a, last result b)."""
    best_a = best_b = math.inf
    res_a = res_b = None
    for _ in range(repeat):
        res_a = res_b = None
        t, res_a = best_time(fn_a, 1, gc_off)
        best_a = min(best_a, t)
        t, res_b = best_time(fn_b, 1, gc_off)
        best_b = min(best_b, t)
    return best_a, best_b, res_a, res_b
