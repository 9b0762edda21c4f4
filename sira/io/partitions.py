"""Hive-partitioned Parquet datasets: ``sales/region=eu/day=2024-01-02/part-0.parquet``.

The partition columns' values are in the directory names, and each engine's own reader types
them its own way: pyarrow makes ``20`` an int32 but ``3000000000`` a string, DuckDB makes every
integer a BIGINT, Spark an INT or a LONG by size, and ``01`` is an integer to two of them. One
dataset would be three relations. sira reads those columns as text on every engine and types
them by one rule, the CSV reader's (:func:`sira.io.csvfile.infer_type` over the column's
values): INT, LONG or BIGINT for integers without leading zeros, FLOAT for numbers, BOOLEAN for
``true``/``false``, DATE for ``YYYY-MM-DD``, else STRING (a timestamp too: its ``:`` are
escaped in a directory name).

    >>> partition_types(["/d/k=1/x=01/p.parquet", "/d/k=20/x=2/p.parquet"], "/d")
    {'k': INT, 'x': STRING}
"""

from __future__ import annotations

from urllib.parse import unquote, urlparse

from ..types import STRING, TIMESTAMP

#: the directory value Hive and Spark write for a NULL partition value
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"

_GLOB = set("*?[")


def _plain_path(file: str) -> str:
    """A file's path without a URI scheme (``file:/tmp/x`` -> ``/tmp/x``), percent-decoded
    as a URI once (Hive's own escapes in the names stay)."""
    if "://" in file or file.startswith("file:"):
        return unquote(urlparse(file).path)
    return file


def dataset_base(path: str) -> str:
    """The directory a dataset's partition directories start below: ``path`` itself, or for
    a glob (``d/*/*.parquet``) the directory before its first pattern."""
    parts = _plain_path(path).split("/")
    for i, part in enumerate(parts):
        if _GLOB & set(part):
            return "/".join(parts[:i])
    return "/".join(parts)


def partition_values(files, base: str) -> dict:
    """``{column: set of values}`` from the ``name=value`` directories between ``base`` and
    each file (values Hive-unescaped; :data:`HIVE_NULL` among them for a NULL)."""
    import os
    root = os.path.normpath(_plain_path(base))
    out: dict = {}
    for file in files:
        path = os.path.normpath(_plain_path(file))
        top = os.path.abspath(root) if os.path.isabs(path) else root  # (Spark's are absolute)
        rel = os.path.relpath(path, top)
        for part in rel.split(os.sep)[:-1]:
            name, sep, value = part.partition("=")
            if sep and name and name != "..":
                out.setdefault(name, set()).add(unquote(value))
    return out


def partition_types(files, base: str) -> dict:
    """``{column: sira type}`` of a dataset's partition columns, by the CSV reader's rule."""
    from .csvfile import infer_type
    out = {}
    for name, values in partition_values(files, base).items():
        t = infer_type(sorted(v for v in values if v != HIVE_NULL))
        out[name] = STRING if t is TIMESTAMP else t
    return out
