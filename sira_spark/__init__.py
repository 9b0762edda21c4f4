"""Spark backend for sira: compiles algebra trees to DataFrame plans.

    >>> import sira
    >>> r = sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,)])
    >>> sira.evaluate("restrict(r, gt(a, 1))", {"r": r}, engine="spark").to_rows()
    [{'a': 2}]

The package imports its engine when one of its names is first used: Spark's Python workers
start from ``sira_spark.daemon``, which must not load numpy or pyarrow before it forks.
"""

__all__ = ["SparkEngine", "default_engine", "unique"]


def __getattr__(name: str):
    if name in __all__:
        from . import session
        return getattr(session, name)
    raise AttributeError(f"module 'sira_spark' has no attribute {name!r}")
