"""Every script in examples/ runs as its docstring says and its own closing check holds."""

from __future__ import annotations

import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def test_orders_trades_live_results_equal_the_batch_algebra():
    done = subprocess.run([sys.executable, str(EXAMPLES / "orders_trades.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    # results leave as the bounds pass them: the union's first row before the end of input
    assert any("union  -> " in line for line in lines[:-1])
    assert lines[-1] == "live results equal the batch algebra on the whole input: True"


def test_every_example_script_is_run_by_a_test():
    tested = {"orders_trades.py"}
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested
