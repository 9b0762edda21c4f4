"""Data in and out of sira: CSV, JSON, Parquet, Arrow IPC, pandas and Arrow, one type mapping.

This is the one place data enters and leaves sira; the API (``sira.read_csv``,
``Relation.to_pandas()``...) and the ``sira`` command both use it.

======================  ==================================================================
in                      out
======================  ==================================================================
:func:`read_csv`        :func:`write_csv` / ``Relation.write_csv``
:func:`read_json`       :func:`write_json` / ``Relation.write_json``
:func:`read_parquet`    :func:`write_parquet` / ``Relation.write_parquet``
:func:`read_arrow`      :func:`write_arrow` (Arrow IPC files: ``.arrow``, ``.feather``)
:func:`from_arrow`      :func:`to_arrow` / ``Relation.to_arrow``
:func:`from_pandas`     :func:`to_pandas` / ``Relation.to_pandas``
:func:`read_file`       :func:`write_file` (the format chosen by the file's extension)
======================  ==================================================================

**Types.** Both ways, Arrow / pandas / Parquet types and sira types correspond as follows
(details, and what else is accepted on reading, in :mod:`sira.io.mapping`):

=====================  ========================================================
sira                   Arrow (pandas column)
=====================  ========================================================
INT                    int32 (int32)
LONG                   int64 (int64)
BIGINT                 decimal128(38, 0) (Arrow-backed decimal); other decimals
                       are refused: cast them to float64 or round them to scale 0
FLOAT                  float64 (float64)
STRING                 string (pandas' string column)
BOOLEAN                bool (bool)
DATE                   date32 (Arrow-backed date32)
TIMESTAMP              timestamp[us] without a time zone (datetime64[us]); one
                       with a time zone reads as its UTC instant, counted in the
                       report (``converted_to_utc``); sira writes no time zone
AVERAGE                struct<count: int64, value: float64>
an interval type       struct<begin, end> over the point's type, a null end
                       meaning unbounded (the Spark engine's layout)
TUPLE{...}             struct with one field per attribute
RELATION{...}          list<struct> in canonical order
=====================  ========================================================

CSV and JSON carry the same values as text: see :func:`read_csv` and :mod:`sira.io.jsonfile`.

**Data is data.** A cell is read as a literal of its attribute's type, never evaluated: a JSON
``"plus(2,3)"`` in an INT attribute is an error, not 5.

**No nulls.** Every reader refuses NULL and NaN with :class:`~sira.errors.NullValue` naming the
relvar (or file), the attribute and the number of rows, before producing anything, unless the
caller passes ``nulls="drop"``: rows holding a NULL or NaN anywhere are then left out.

**Reports.** Duplicate rows collapse into one tuple (a relation is a set). Pass a
:class:`ReadReport` as ``report=`` to learn how many rows were read, collapsed and dropped::

    >>> import io, sira
    >>> report = sira.ReadReport()
    >>> r = sira.read_csv(io.StringIO("a,b\\n1,x\\n1,x\\n,y\\n"), nulls="drop", report=report)
    >>> r.to_rows(), report.duplicates, report.dropped, report.dropped_by_attribute
    ([{'a': 1, 'b': 'x'}], 1, 1, {'a': 1})

**Optional dependencies.** ``import sira`` needs neither pandas nor pyarrow; the Arrow,
Parquet and pandas functions raise :class:`~sira.errors.MissingExtra` naming the extra to
install (``pip install 'sira[io]'``) when they are missing. CSV and JSON need nothing.
"""

from __future__ import annotations

from ..errors import DataFormatError
from ._support import path_suffix
from .arrowdata import (from_arrow, from_pandas, read_arrow, read_parquet, relations_of,
                        to_arrow, to_pandas, write_arrow, write_parquet)
from .csvfile import read_csv, write_csv
from .jsonfile import read_json, relation_from_json, relation_to_json, write_json
from .report import ReadReport

READERS = {".csv": read_csv, ".json": read_json, ".parquet": read_parquet, ".pq": read_parquet,
           ".arrow": read_arrow, ".feather": read_arrow, ".ipc": read_arrow}
WRITERS = {"csv": write_csv, "json": write_json, "parquet": write_parquet, "arrow": write_arrow}
_FORMAT_OF_SUFFIX = {".csv": "csv", ".tsv": "csv", ".json": "json", ".parquet": "parquet",
                     ".pq": "parquet", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow"}


def read_file(path, *, nulls: str = "error", report: ReadReport | None = None,
              name: str | None = None):
    """A relation from a data file, its format chosen by its extension: ``.csv`` (``.tsv``:
    tab-separated), ``.json``, ``.parquet``/``.pq``, ``.arrow``/``.feather``/``.ipc``.

    Raises:
        DataFormatError: an extension sira does not read; and whatever the reader raises.
    """
    suffix = path_suffix(path)
    if suffix == ".tsv":
        return read_csv(path, delimiter="\t", nulls=nulls, report=report, name=name)
    if suffix not in READERS:
        raise DataFormatError(f"{path}: sira reads .csv, .tsv, .json, .parquet and .arrow files "
                              f"(not '{suffix or 'no extension'}')", source=str(path))
    return READERS[suffix](path, nulls=nulls, report=report, name=name)


def format_of(path) -> str | None:
    """``csv``, ``json``, ``parquet`` or ``arrow`` for a file name, by its extension."""
    return _FORMAT_OF_SUFFIX.get(path_suffix(path))


def write_file(relation, path, fmt: str | None = None) -> None:
    """Write a relation to ``path`` in ``fmt`` (``csv json parquet arrow``; by default the
    format of the file's extension)."""
    fmt = fmt or format_of(path)
    if fmt not in WRITERS:
        raise DataFormatError(f"{path}: sira writes csv, json, parquet and arrow files",
                              source=str(path))
    if fmt == "csv" and path_suffix(path) == ".tsv":
        write_csv(relation, path, delimiter="\t")
        return
    WRITERS[fmt](relation, path)


__all__ = ["ReadReport", "format_of", "from_arrow", "from_pandas", "read_arrow", "read_csv",
           "read_file", "read_json", "read_parquet", "relation_from_json", "relation_to_json",
           "relations_of", "to_arrow", "to_pandas", "write_arrow", "write_csv", "write_file",
           "write_json", "write_parquet"]
