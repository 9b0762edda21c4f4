"""Shared fixtures: the engines every spec case runs on."""

from __future__ import annotations

import shutil

import pytest

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


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param
