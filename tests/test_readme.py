"""Every ``python`` block of the README that is not a doctest runs as written, in a fresh
interpreter from the checkout (the doctest blocks run under pytest's doctest collection).

A block whose fence reads ```` ```python not-run ```` is shown only; none is so marked today,
and the README must say why next to any that is.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```", re.M | re.S)


def script_blocks(text: str) -> list:
    """(line, source) of each python block that is neither a doctest nor marked not-run."""
    out = []
    for m in FENCE.finditer(text):
        info = m.group("info").split()
        body = m.group("body")
        if info[:1] != ["python"] or "not-run" in info[1:] or body.lstrip().startswith(">>>"):
            continue
        out.append((text[:m.start()].count("\n") + 2, body))
    return out


BLOCKS = script_blocks(README.read_text())


def test_the_readme_has_script_blocks_and_they_are_found():
    assert len(BLOCKS) >= 3
    assert script_blocks("```python\nprint(1)\n```\n```python\n>>> 1\n1\n```\n"
                         "```python not-run\nx\n```\n") == [(2, "print(1)\n")]


def _needs(body: str) -> str | None:
    if "sira_spark" in body:
        from conftest import spark_available
        return None if spark_available() else "Spark (Java and pyspark) is not installed"
    if "sira_duckdb" in body:
        from conftest import duckdb_available
        return None if duckdb_available() else "duckdb is not installed"
    return None


@pytest.mark.parametrize("line, body", BLOCKS, ids=[f"README.md:{ln}" for ln, _ in BLOCKS])
def test_every_readme_script_runs_as_written(line, body, tmp_path):
    missing = _needs(body)
    if missing:
        pytest.skip(missing)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    done = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"README.md line {line} failed:\n{done.stderr[-4000:]}"
    assert done.stdout.strip(), f"README.md line {line} printed nothing"
