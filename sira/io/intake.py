"""One intake for every engine: what a relvar may be, and how a value that is not a Relation
becomes one.

Every engine accepts the same kinds of relvar value:

* a :class:`~sira.values.Relation`;
* a pandas DataFrame, a polars DataFrame (through Arrow), an Arrow table or record batch, a
  DuckDB relation, a Spark DataFrame;
* a file, named by its format: ``"csv:PATH"``, ``"parquet:PATH"``, ``"json:PATH"``,
  ``"arrow:PATH"``, read exactly as :func:`sira.read_csv`, :func:`sira.read_parquet`,
  :func:`sira.read_json` and :func:`sira.read_arrow` read it (same relation, same error);
* on DuckDB and Spark, a table of the engine's session: ``"table:NAME"``.

DuckDB and Spark read their own kinds where they are (a DuckDB relation, a Spark DataFrame, a
table, a Parquet file) and take every other kind through :func:`relation_of`, so that the
relation -- its types, its NULL policy, its duplicates -- is the same on every engine. Anything
else (a plain string, a dict, a list) is refused with a :class:`~sira.errors.SiraTypeError`
naming the relvar and what is accepted, never passed on to fail obscurely.

    >>> relation_of("data.csv", "r")
    Traceback (most recent call last):
    ...
    sira.errors.SiraTypeError: relvar 'r': 'data.csv' is a plain string; name a file by its format, as 'csv:data.csv' (a relvar may be a Relation, a pandas or polars DataFrame, an Arrow table, a DuckDB relation, a Spark DataFrame, 'csv:PATH', 'parquet:PATH', 'json:PATH', 'arrow:PATH', or on DuckDB and Spark 'table:NAME')
"""

from __future__ import annotations

import os

from ..errors import SiraTypeError
from ..values import Relation

ACCEPTED = ("a Relation, a pandas or polars DataFrame, an Arrow table, a DuckDB relation, a "
            "Spark DataFrame, 'csv:PATH', 'parquet:PATH', 'json:PATH', 'arrow:PATH', or on "
            "DuckDB and Spark 'table:NAME'")

#: file prefixes and the reader each stands for
FILE_KINDS = ("csv", "parquet", "json", "arrow")


def kind_of(value) -> str:
    """What a relvar value is: ``relation``, ``pandas``, ``polars``, ``arrow``, ``duckdb``,
    ``spark``, ``csv``/``parquet``/``json``/``arrow-file``, ``table``, or ``unknown``
    (checked by type and module name, so no optional library is imported here).

        >>> kind_of("parquet:/data/r.parquet"), kind_of({"a": 1})
        ('parquet', 'unknown')
    """
    if isinstance(value, Relation):
        return "relation"
    if isinstance(value, str):
        prefix, sep, rest = value.partition(":")
        if sep and rest and prefix.lower() in FILE_KINDS:
            return "arrow-file" if prefix.lower() == "arrow" else prefix.lower()
        if sep and rest and prefix.lower() == "table":
            return "table"
        return "unknown"
    module = type(value).__module__ or ""
    name = type(value).__name__
    if module.startswith("pandas") and name == "DataFrame":
        return "pandas"
    if module.startswith("polars") and name == "DataFrame":
        return "polars"
    if module.startswith("pyarrow") and name in ("Table", "RecordBatch"):
        return "arrow"
    if module.startswith("duckdb") and name == "DuckDBPyRelation":
        return "duckdb"
    if module.startswith("pyspark") and name == "DataFrame":
        return "spark"
    return "unknown"


def path_of(value: str) -> str:
    """The path of a file relvar (``"csv:PATH"`` -> ``PATH``, user and variables expanded)."""
    return os.path.expanduser(value.partition(":")[2])


def refuse(value, name: str, engine: str | None = None) -> SiraTypeError:
    """The error for a relvar value no engine takes (or ``engine`` does not)."""
    kind = kind_of(value)
    if kind == "table":
        why = (f"{value!r} names a table of a DuckDB or Spark session; the {engine or 'Python'} "
               f"engine has no tables")
    elif isinstance(value, str):
        hint = ""
        ext = os.path.splitext(value)[1].lower().lstrip(".")
        if ext in ("csv", "tsv", "parquet", "json", "arrow", "feather"):
            prefix = {"tsv": "csv", "feather": "arrow"}.get(ext, ext)
            hint = f", as '{prefix}:{value}'"
        why = f"{value[:80]!r} is a plain string; name a file by its format{hint}"
    else:
        why = f"a {type(value).__module__}.{type(value).__name__} is not a relation"
    return SiraTypeError(f"relvar '{name}': {why} (a relvar may be {ACCEPTED})",
                         operator="RELVAR", expected="a relation value, DataFrame, Arrow "
                         "table or file", got=type(value).__name__)


def relation_of(value, name: str, *, nulls: str = "error") -> Relation:
    """A relvar value as a Relation, read with sira's own readers and type mapping.

    Args:
        value: any relvar value but ``table:NAME`` (see the module docstring).
        name: the relvar's name, for messages.
        nulls: ``"error"`` (refuse NULL and NaN with ``NullValue``) or ``"drop"``.
    Raises:
        SiraTypeError: the value is not a relation (``refuse``).
        NullValue, DataFormatError, DataSourceError: as the readers raise them.
    """
    from . import (from_arrow, from_pandas, read_arrow, read_csv, read_json, read_parquet)
    kind = kind_of(value)
    if kind == "relation":
        return value
    if kind == "pandas":
        return from_pandas(value, nulls=nulls, name=name)
    if kind == "arrow":
        return from_arrow(value, nulls=nulls, name=name)
    if kind == "polars":
        return from_arrow(value.to_arrow(), nulls=nulls, name=name)
    if kind == "duckdb":
        return from_arrow(value.to_arrow_table(), nulls=nulls, name=name)
    if kind == "spark":
        return from_arrow(value.toArrow(), nulls=nulls, name=name)
    readers = {"csv": read_csv, "parquet": read_parquet, "json": read_json,
               "arrow-file": read_arrow}
    if kind in readers:
        return readers[kind](path_of(value), nulls=nulls, name=name)
    raise refuse(value, name)


__all__ = ["ACCEPTED", "FILE_KINDS", "kind_of", "path_of", "refuse", "relation_of"]
