"""What every path of a live query on Spark shares: the hidden columns, the encoding of rowtimes
as event time, bounds read back from watermarks, the late-row protocol of the keyed handlers.

**Rowtimes as event time.** A rowtime ``t`` (a LONG or INT from 0 to :data:`MAX_ROWTIME`) is
two milliseconds of event time, so that a watermark can sit between two units: the watermark
of a stream whose bound (latest rowtime) is ``b`` is ``W = 2b - 1`` ms, a row is late exactly
when ``2t <= W`` (``t < b``, as sira rejects it) and a result that is final once the bound
passes ``t`` leaves when ``W > 2t``.

The column a source's watermark is defined on (:data:`EVENT_TIME`) holds ``2t + SHIFT`` ms with
a delay of ``SHIFT + 1`` ms: the same watermark, but Spark's own late-row filter in front of
the first keyed operator (which compares the column with the *previous* micro-batch's
watermark, so it would let some late rows through and drop others unseen) never fires for a
row less than ``SHIFT / 2`` units late. Every late row thus reaches sira's handlers, which
judge it against the current watermark, count it and, if asked, hand it on.

    >>> bound_of(0) is None, bound_of(39), late(19, 39), late(20, 39)
    (True, 20, True, False)
"""

from __future__ import annotations

import datetime as _dt
import json

import attrs
import numpy as np
from pyspark.sql import functions as F

from sira.errors import NullValue
from sira.intervals import Interval, IntervalType
from sira.types import AVERAGE, BIGINT, TIMESTAMP, Average, RelationType, TupleType
from sira.values import Relation, Tuple

#: the hidden columns a live plan adds (never part of a sira heading)
EVENT_TIME = "__sira_evt"  # 2t + SHIFT ms, the sources' watermark column
SOURCE = "__sira_src"  # which source a row comes from (its index)
HEARTBEAT = "__sira_hb"  # a punctuation row: its rowtime is a bound, its other columns nothing
LATE_ROW = "__sira_late_row"  # in a handler's output: one late row, as JSON (late_rows_sink)
#: the observed metric carrying the late rows the handlers left out, per micro-batch
METRIC = "sira_live"
#: how far the watermark column is ahead of the event time (ms): see the module docstring
SHIFT = 2 ** 40
#: the largest rowtime a live query on Spark takes (2t + SHIFT ms must fit a pandas timestamp)
MAX_ROWTIME = 4 * 10 ** 12


def bound_of(watermark_ms: int):
    """The stream bound a watermark encodes (``W = 2b - 1``), or None before any watermark."""
    return None if watermark_ms <= 0 else (watermark_ms + 1) // 2


def late(t: int, watermark_ms: int) -> bool:
    """Whether a row at rowtime ``t`` is late under watermark ``watermark_ms`` (none is before
    the first watermark)."""
    return 0 < watermark_ms and 2 * t <= watermark_ms


def timeout_of(instant, watermark_ms: int) -> int:
    """The event-time timeout that fires once the bound has passed ``instant`` (Spark fires a
    timeout when the watermark is past it; it must be later than the watermark and positive)."""
    return max(2 * int(instant), watermark_ms + 1, 1)


@attrs.frozen
class LiveSource:
    """A stream for :func:`~sira_spark.live.stream`: a streaming DataFrame whose column
    ``rowtime`` (LONG or INT, from 0 to 4e12: epoch milliseconds fit until the year 2096) is
    its rowtime; ``punctuation`` optionally names a boolean column marking heartbeat rows
    (their rowtime is a bound; their other columns are ignored).

        >>> LiveSource(df, rowtime="ts", punctuation="is_bound")   # doctest: +SKIP
    """

    df: object
    rowtime: str = "ts"
    punctuation: str | None = None


@attrs.frozen
class StreamShape:
    """What the live runtime's compiler needs to know of a stream (a NamedStream's shape)."""

    name: str
    heading: object
    rowtime: str
    seq: int = 0


class ReportingHandler:
    """The base of the live paths' stateful handlers (``applyInPandasWithState``): a sira error
    raised while ``handle`` makes a group's output reaches the driver as that sira error
    (:func:`sira_spark.compiler.reported`), which :meth:`SparkLiveQuery.await_termination
    <sira_spark.live.SparkLiveQuery.await_termination>` raises, rather than as a Python
    worker's traceback."""

    def __call__(self, key, frames, state):
        from ..compiler import reported
        with reported():
            yield from self.handle(key, frames, state)  # (each handler's own)


def check_no_nulls(pdf, columns, stream_name) -> None:
    """Refuse a micro-batch holding a NULL (or NaN) in a sira column: NullValue naming the
    stream, the attribute and how many rows."""
    for name in columns:
        missing = pdf[name].isna()
        if missing.any():
            raise NullValue(relvar=stream_name, attribute=name, count=int(missing.sum()))


def late_frames(names, count: int, rows=None) -> list:
    """What a handler adds to its output for ``count`` late rows: one *marker* row each, its
    sira columns null (a result never holds a NULL, so the marker never leaves the plan: see
    :func:`marker`), with the late row's JSON in :data:`LATE_ROW` when ``rows`` are kept
    (``late_rows_sink``)."""
    import pandas as pd
    if not count:
        return []
    columns = {n: pd.Series([None] * count, dtype=object) for n in names}
    if rows is not None:
        columns[LATE_ROW] = rows
    return [pd.DataFrame(columns)]


def marker(heading) -> str:
    """The column whose NULL marks a late row in a handler's output (the heading's first)."""
    return heading.names[0]


def late_row_json(stream: str, rowtime: int, bound: int, row: dict) -> str:
    """One late row as the late rows table holds it (see ``late_rows_sink``)."""
    return json.dumps({"stream": stream, "rowtime": int(rowtime), "bound": int(bound),
                       "row": {k: _plain(v) for k, v in row.items()}}, sort_keys=True)


def _plain(value):
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return str(value)


def output_schema(heading, keep_late_rows: bool):
    """A handler's output schema: the query's columns as they cross out of pandas
    (:func:`pandas_type`) and, when late rows are kept, :data:`LATE_ROW`."""
    from pyspark.sql import types as T
    fields = [T.StructField(n, pandas_type(t), True) for n, t in heading.attributes]
    if keep_late_rows:
        fields.append(T.StructField(LATE_ROW, T.StringType(), True))
    return T.StructType(fields)


# ------------------------------------------------------------------------------ pandas

#: TIMESTAMP's epoch: a TIMESTAMP crosses into and out of the handlers' pandas frames as LONG
#: microseconds since it. Spark hands a timestamp column to pandas as nanoseconds, which hold
#: the years 1677 to 2262 only; sira's TIMESTAMP runs from year 1 to 9999.
EPOCH = _dt.datetime(1970, 1, 1)
_MICROSECOND = _dt.timedelta(microseconds=1)


def pandas_type(t):
    """The Spark type a value of sira type ``t`` crosses into and out of a handler's pandas
    frame as: its own (:func:`sira_spark.types.spark_type`), with every TIMESTAMP inside as LONG
    microseconds since :data:`EPOCH`.

        >>> from sira import TIMESTAMP, TIMESTAMPINTERVAL
        >>> pandas_type(TIMESTAMP).simpleString(), pandas_type(TIMESTAMPINTERVAL).simpleString()
        ('bigint', 'struct<begin:bigint,end:bigint>')
    """
    from pyspark.sql import types as T

    from ..types import spark_type
    if not _holds_timestamp(t):
        return spark_type(t)
    if t == TIMESTAMP:
        return T.LongType()
    if isinstance(t, IntervalType):
        return T.StructType([T.StructField("begin", T.LongType(), False),
                             T.StructField("end", T.LongType(), True)])
    fields = T.StructType([T.StructField(n, pandas_type(x), False)
                           for n, x in t.heading.attributes])
    return fields if isinstance(t, TupleType) else T.ArrayType(fields, False)


def _holds_timestamp(t) -> bool:
    if isinstance(t, IntervalType):
        return t.point == TIMESTAMP
    if isinstance(t, (TupleType, RelationType)):
        return any(_holds_timestamp(x) for x in t.heading.types)
    return t == TIMESTAMP


def to_pandas_column(c, t):
    """Column ``c`` of sira type ``t`` (in sira's Spark type) as :func:`pandas_type` holds it."""
    return _recode(c, t, lambda x: F.timestamp_diff("MICROSECOND", _epoch(), x))


def from_pandas_column(c, t):
    """The inverse of :func:`to_pandas_column`."""
    return _recode(c, t, lambda x: F.timestamp_add("MICROSECOND", x, _epoch()))


def _epoch():
    return F.expr("TIMESTAMP_NTZ'1970-01-01 00:00:00'")


def _recode(c, t, timestamp):
    if not _holds_timestamp(t):
        return c
    if t == TIMESTAMP:
        return timestamp(c)
    if isinstance(t, IntervalType):
        return F.when(c.isNotNull(), F.struct(timestamp(c["begin"]).alias("begin"),
                                              timestamp(c["end"]).alias("end")))
    if isinstance(t, RelationType):
        element = TupleType(t.heading)
        return F.transform(c, lambda e: _recode(e, element, timestamp))
    return F.when(c.isNotNull(), F.struct(*[_recode(c[n], x, timestamp).alias(n)
                                            for n, x in t.heading.attributes]))


def to_pandas_columns(df, heading):
    """``df`` with the heading's columns as they cross into pandas (:func:`to_pandas_column`),
    its other columns as they are; ``df`` itself when no column holds a TIMESTAMP."""
    return _recoded(df, heading, to_pandas_column)


def from_pandas_columns(df, heading):
    """A handler's output with the heading's columns back in sira's Spark types (its other
    columns as they are); ``df`` itself when no column holds a TIMESTAMP."""
    return _recoded(df, heading, from_pandas_column)


def _recoded(df, heading, recode):
    if not any(_holds_timestamp(t) for t in heading.types):
        return df
    types = dict(heading.attributes)
    return df.select(*[recode(F.col(f"`{n}`"), types[n]).alias(n) if n in types
                       else F.col(f"`{n}`") for n in df.columns])


def sira_values(values, t) -> list:
    """A pandas column's cells (of :func:`pandas_type`) as sira values of type ``t``."""
    return [sira_value(t, v) for v in values]


def sira_value(t, v):
    """One pandas cell as a sira value of type ``t`` (numpy scalars as Python ones, structs as
    intervals, tuples and AVERAGEs, arrays of structs as relations, LONG microseconds as a
    TIMESTAMP).

        >>> sira_value(TIMESTAMP, -62135596800000000)
        datetime.datetime(1, 1, 1, 0, 0)
    """
    if isinstance(v, np.generic):
        v = v.item()
    if t == TIMESTAMP:
        return EPOCH + _dt.timedelta(microseconds=v)
    if t == BIGINT:
        return int(v)
    if isinstance(t, IntervalType):
        return Interval(sira_value(t.point, v["begin"]),
                        None if v["end"] is None else sira_value(t.point, v["end"]))
    if t == AVERAGE:
        return Average(int(v["count"]), float(v["value"]))
    if isinstance(t, TupleType):
        return Tuple(t.heading, _sira_row(t.heading, v))
    if isinstance(t, RelationType):
        return Relation(t.heading, frozenset(_sira_row(t.heading, e) for e in v))
    return v


def _sira_row(heading, cells) -> tuple:
    return tuple(sira_value(t, cells[n]) for n, t in heading.attributes)


def pandas_value(t, v):
    """A sira value of type ``t`` as a handler hands it to Spark (:func:`pandas_type`): a struct
    as a dict, a relation as a list of dicts, a TIMESTAMP as LONG microseconds."""
    if t == TIMESTAMP:
        return (v - EPOCH) // _MICROSECOND
    if isinstance(t, IntervalType):
        return {"begin": pandas_value(t.point, v.begin),
                "end": None if v.end is None else pandas_value(t.point, v.end)}
    if t == AVERAGE:
        return {"count": v.count, "value": v.value}
    if isinstance(t, TupleType):
        return _pandas_row(t.heading, v.values)
    if isinstance(t, RelationType):
        return [_pandas_row(t.heading, row) for row in v.sorted_body()]
    return v


def _pandas_row(heading, row) -> dict:
    return {n: pandas_value(t, x) for n, t, x in zip(heading.names, heading.types, row)}


def plain_column(t) -> bool:
    """Whether a pandas column of sira type ``t`` holds its values as they are (no struct, no
    TIMESTAMP carried as microseconds, no BIGINT as a decimal)."""
    return not (t == AVERAGE or t == BIGINT or _holds_timestamp(t)
                or isinstance(t, (IntervalType, TupleType, RelationType)))
