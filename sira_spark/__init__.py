"""Spark backend for sira: compiles algebra trees to DataFrame plans.

    >>> import sira
    >>> r = sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,)])
    >>> sira.evaluate("restrict(r, gt(a, 1))", {"r": r}, engine="spark").to_rows()
    [{'a': 2}]

The package imports its engine when one of its names (or modules, ``sira_spark.live``) is
first used: Spark's Python workers start from ``sira_spark.daemon``, which must not load numpy
or pyarrow before it forks.
"""

import importlib
import importlib.util

__all__ = ["SparkEngine", "default_engine", "unique"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module(".session", __name__), name)
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
