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

import json

import attrs

from sira.errors import NullValue

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
    """A handler's output schema: the query's columns and, when late rows are kept,
    :data:`LATE_ROW`."""
    from pyspark.sql import types as T

    from ..types import spark_type
    fields = [T.StructField(n, spark_type(t), True) for n, t in heading.attributes]
    if keep_late_rows:
        fields.append(T.StructField(LATE_ROW, T.StringType(), True))
    return T.StructType(fields)
