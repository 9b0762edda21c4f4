"""The benchmarks still run: each pure-Python and DuckDB script on a tiny input, as a user would
start it. Not a speed test (no time is checked); the scripts compare sira's results with their
plain baselines' (count and checksum, or equal sets) and fail on a difference, so this also
keeps those comparisons honest. The Spark scripts and ``benchmarks/duckdb.py`` take tens of
seconds even on tiny inputs (sessions, fixed set-up) and are left to their own runs."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

RUNS = {
    "core.py": ["--n", "500", "--repeat", "1"],
    "plain.py": ["--n", "500", "--repeat", "1"],
    "intervals.py": ["--n", "500", "--m", "50", "--repeat", "1"],
    "io.py": ["--n", "500", "--repeat", "1"],
    "live.py": ["--n", "500", "--sizes", "500,1000", "--windows", "500"],
}
SCALING = ["--engines", "python,duckdb", "--families", "join", "--n", "300", "--factor", "2"]


def _run(script: str, args: list) -> str:
    """The output of ``benchmarks/<script> args`` run as a user runs it; it must exit 0."""
    pytest.importorskip("duckdb")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("script", sorted(RUNS))
def test_the_benchmark_runs_on_a_tiny_input(script):
    assert _run(script, RUNS[script]).strip(), "the benchmark printed nothing"


def test_the_scaling_table_has_a_row_per_engine_and_columns_apart():
    out = _run("scaling.py", SCALING)
    header, *rows = [line.split() for line in out.splitlines()[1:]]
    assert header == ["family", "shape", "engine", "s@300", "MiB", "s@600", "MiB", "growth",
                      "vs", "py"], out
    # time and memory at both sizes, the growth, the ratio to the Python engine
    assert [r[:3] for r in rows] == [["join", "ten", "python"], ["join", "ten", "duckdb"]]
    assert all(len(r) == 9 for r in rows), out


def test_sizes_are_shown_short_and_exact():
    import importlib.util
    spec = importlib.util.spec_from_file_location("scaling_benchmark",
                                                  ROOT / "benchmarks" / "scaling.py")
    scaling = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scaling)
    assert [scaling._short(n) for n in (10_000_000, 1_000_000, 100_000, 1500, 300)] == \
        ["10M", "1M", "100k", "1,500", "300"]
