"""DuckDB backend for sira: compiles algebra trees to one SQL query DuckDB runs vectorised,
on one machine, spilling to disk when memory is short.

    >>> import sira
    >>> r = sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,)])
    >>> sira.evaluate("restrict(r, gt(a, 1))", {"r": r}, engine="duckdb").to_rows()
    [{'a': 2}]
"""

from .compiler import NotSupportedOnDuckDB
from .functions import unsupported_operators
from .relvars import unique
from .session import DuckDBEngine, default_engine

__all__ = ["DuckDBEngine", "NotSupportedOnDuckDB", "default_engine", "unique",
           "unsupported_operators"]
