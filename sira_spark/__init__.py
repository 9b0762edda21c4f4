"""Spark backend for sira: compiles algebra trees to DataFrame plans.

    >>> import sira
    >>> r = sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,)])
    >>> sira.evaluate("restrict(r, gt(a, 1))", {"r": r}, engine="spark").to_rows()
    [{'a': 2}]
"""

from .session import SparkEngine, default_engine, unique
from . import live  # noqa: E402,F401  (SparkEngine.stream: live queries on Structured Streaming)

__all__ = ["SparkEngine", "default_engine", "unique"]
