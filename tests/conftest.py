"""Shared fixtures: the engines every spec case runs on."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

# Spark's Python workers must run this interpreter (the one with sira installed), on loopback.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("SIRA_SPARK_PARTITIONS", "2")  # small data: few partitions, fast tests

ENGINES = ["python"]


def spark_available() -> bool:
    if shutil.which("java") is None:
        return False
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    try:
        import sira_spark
    except ImportError:
        return False
    return hasattr(sira_spark, "default_engine")


if spark_available():
    ENGINES.append("spark")


def duckdb_available() -> bool:
    try:
        import duckdb  # noqa: F401
        import pyarrow  # noqa: F401
        import sira_duckdb  # noqa: F401
    except ImportError:
        return False
    return True


if duckdb_available():
    ENGINES.append("duckdb")


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param
