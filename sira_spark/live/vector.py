"""The vectorised path: CHANGES, ISTREAM or DSTREAM of a pointwise integer SUMMARIZEBY over a
CQL time window of one stream, with numpy over each key's micro-batch.

The shape (:func:`window_sums_of`)::

    changes|istream|dstream(summarizebyusing(window(S, ts, now | range(T) | range(unbounded)
                                                       | range(T) slide(L)),
                                             (k..., during), (a(plus(x)) ...), (during)), at)

where every aggregate is an integer sum (INT or LONG) of an attribute or a constant (``plus(1)``
counts), and ``k...`` is exactly the key the query's state is partitioned by, so each Spark
group is one group of the summary. It is the usual live query ("a running per-key total over
the last T units, as changes"), and the one the benchmark measures.

Each element at ``t`` is in the window during ``[begin, end)`` (``[t, t+T)``, ``[t, t+1)`` for
``now``, ``[⌈t/L⌉·L, ⌈(t+T)/L⌉·L)`` with a slide, no end for ``range(unbounded)``), so the
group's count and sums change by ``+1, +x`` at ``begin`` and ``-1, -x`` at ``end``. A key's
state (:class:`KeyState`) is its rows at instants the bound has not passed yet (equal rows at
one instant are one element: set semantics), the entries and exits still ahead (instant, count
delta, sum deltas) and the group's count and sums. Each call folds, with one sort and one
cumulative sum, the instants the bound has passed: at each, the group's tuple before and after;
where they differ, ``-`` the old one (if the group held anything) and ``+`` the new one.

These are exactly the rows the live runtime's operators give (``WindowSummarize``,
``WindowOp`` + ``TemporalSummarize``): tests/test_spark_live.py compares the two on Spark and
this module's kernel against the live runtime on random input. An INT sum leaving INT's range
at an instant where the group holds something raises the live runtime's IntOverflow; a LONG
sum that could leave int64 during a fold is folded with Python integers.

    >>> import sira
    >>> h = sira.Heading.of({"k": sira.INT, "v": sira.INT, "ts": sira.LONG})
    >>> n = sira.parse("changes(summarizebyusing(window(s, ts, range(10)), (k, during),"
    ...                " (total(plus(v))), (during)), at)", {"s": h})
    >>> from sira_spark.live.common import StreamShape
    >>> shape = window_sums_of(n, {"s": StreamShape("s", h, "ts")}, ("k",))
    >>> state = KeyState.fresh(shape)
    >>> state.add({"k": np.array([1, 1]), "v": np.array([5, 2]), "ts": np.array([3, 6])})
    >>> out = state.close(shape, 20)      # the bound has passed 3, 6, 13 and 16
    >>> sorted(zip(out["at"].tolist(), out["kind"], out["total"].tolist()))
    [(3, '+', 5), (6, '+', 7), (6, '-', 5), (13, '+', 2), (13, '-', 7), (16, '-', 2)]
"""

from __future__ import annotations

import io
import json

import attrs
import numpy as np

from sira.algebra.aggregation import SummarizeBy, aggregations
from sira.algebra.basic import RelvarRef
from sira.algebra.windows import Changes, DStream, IStream, Window
from sira.expressions.nodes import AttrRef, Literal
from sira.types import BOOLEAN, FLOAT, INT, LONG, STRING

from .common import (LATE_ROW, ReportingHandler, bound_of, check_no_nulls, late_frames,
                     late_row_json, timeout_of)

#: attribute types whose values numpy holds exactly (the others take the general path)
_VECTOR_TYPES = (INT, LONG, BOOLEAN, FLOAT, STRING)
#: windows longer than this take the general path (instants stay far inside int64)
_LONGEST = 2 ** 40
_STATE_VERSION = 1
_SIGNS = np.array(["-", "+"], dtype=object)


@attrs.frozen
class Sum:
    """One aggregate: ``name(plus(column))``, or ``name(plus(constant))`` when ``column`` is
    None; ``result_type`` INT or LONG."""

    name: str
    column: str | None
    constant: int
    result_type: object


@attrs.frozen
class WindowSums:
    """A query of the vectorised shape (see the module docstring)."""

    stream: str
    columns: tuple  # the stream's attributes, in its heading's order
    rowtime: str
    begin_slide: int | None  # L of a slide window (entries and exits rounded up to it)
    length: int | None  # T (1 for now; None for range(unbounded))
    by: tuple  # the group's attributes (the partition key)
    sums: tuple  # Sum per aggregate
    emit: str  # "changes", "istream" or "dstream"
    at: str
    heading: object  # the query's heading

    def events(self, rows: dict):
        """The entries and exits of newly closed elements: (instants, count deltas, sum deltas
        with one row per aggregate)."""
        t = rows[self.rowtime].astype(np.int64)
        n = len(t)
        values = np.empty((len(self.sums), n), dtype=np.int64)
        for i, s in enumerate(self.sums):
            values[i] = rows[s.column] if s.column is not None else s.constant
        begin = t if self.begin_slide is None else _ceil(t, self.begin_slide)
        if self.length is None:
            return begin, np.ones(n, dtype=np.int64), values
        end = t + self.length
        if self.begin_slide is not None:
            end = _ceil(end, self.begin_slide)
        one = np.ones(n, dtype=np.int64)
        return (np.concatenate([begin, end]), np.concatenate([one, -one]),
                np.concatenate([values, -values], axis=1))


def _ceil(t, step: int):
    """``t`` rounded up to a multiple of ``step`` (as the batch engine's ``_ceil_to``)."""
    return -((-t) // step) * step


def window_sums_of(node, shapes: dict, key: tuple) -> WindowSums | None:
    """The vectorised shape of ``node`` (a query over the streams ``shapes`` whose state is
    partitioned by ``key``), or None when it has another shape."""
    if not isinstance(node, (Changes, IStream, DStream)):
        return None
    summary = node.source
    if not isinstance(summary, SummarizeBy) or not isinstance(summary.source, Window):
        return None
    window = summary.source
    stream = window.source
    if not isinstance(stream, RelvarRef) or stream.name not in shapes:
        return None
    shape, during, spec = shapes[stream.name], window.during, window.spec
    if summary.using != (during,) or during not in summary.by or node.during != during:
        return None
    if spec.kind not in ("now", "range") or spec.rows is not None or spec.partition:
        return None
    if window.ts != shape.rowtime or any(t not in _VECTOR_TYPES
                                         for _, t in shape.heading.attributes):
        return None
    by = tuple(n for n in summary.by if n != during)
    if set(by) != set(key):
        return None
    sums = _sums(summary)
    if sums is None:
        return None
    length = 1 if spec.kind == "now" else window.range_units
    slide = window.slide_units
    if any(v is not None and v >= _LONGEST for v in (length, slide)):
        return None
    emit = {Changes: "changes", IStream: "istream", DStream: "dstream"}[type(node)]
    return WindowSums(stream.name, shape.heading.names, shape.rowtime, slide, length, by,
                      sums, emit, node.at, node.heading)


def _sums(summary) -> tuple | None:
    """Each aggregate as a :class:`Sum`, or None unless all are integer sums of an attribute
    or a constant."""
    out = []
    heading = summary.source.heading
    for (name, _, expr), agg in zip(summary.specs, aggregations(summary.specs, heading,
                                                                 "SUMMARIZEBY")):
        if agg.name != "plus" or agg.result_type not in (INT, LONG):
            return None
        if isinstance(expr, AttrRef):
            out.append(Sum(name, expr.name, 0, agg.result_type))
        elif isinstance(expr, Literal) and type(expr.value) is int:
            out.append(Sum(name, None, expr.value, agg.result_type))
        else:
            return None
    return tuple(out)


# ------------------------------------------------------------------------------ the kernel

class KeyState:
    """One key's state: its rows not yet closed, its entries and exits ahead, its group."""

    def __init__(self, rows: dict, times, counts, deltas, count: int, totals: list):
        self.rows = rows  # column -> array: rows at instants the bound has not passed
        self.times = times  # instants of the entries and exits ahead
        self.counts = counts  # their count deltas
        self.deltas = deltas  # their sum deltas (one row per aggregate)
        self.count = count  # elements in the window now
        self.totals = totals  # the sums now (Python ints)

    @classmethod
    def fresh(cls, shape: WindowSums) -> "KeyState":
        empty = np.zeros(0, dtype=np.int64)
        return cls({}, empty, empty, np.zeros((len(shape.sums), 0), dtype=np.int64), 0,
                   [0] * len(shape.sums))

    def add(self, rows: dict) -> None:
        """On-time rows (column -> array) join the rows waiting for their instant to close."""
        if not self.rows:
            self.rows = dict(rows)
        else:
            self.rows = {c: np.concatenate([self.rows[c], rows[c]]) for c in self.rows}

    def at_rest(self) -> bool:
        """Whether the key holds nothing (its state can be removed)."""
        return not self.rows and not len(self.times) and self.count == 0

    def pending(self, shape: WindowSums):
        """The earliest instant the bound must pass for something to happen, or None."""
        ahead = [int(self.times.min())] if len(self.times) else []
        if self.rows:
            ahead.append(int(self.rows[shape.rowtime].min()))
        return min(ahead, default=None)

    def close(self, shape: WindowSums, bound) -> dict:
        """Move the bound to ``bound``: the output columns (without the group's attributes) of
        every instant it has passed."""
        if bound is None:
            return _output(shape, *_no_output(shape))
        self._close_rows(shape, bound)
        if not len(self.times):
            return _output(shape, *_no_output(shape))
        ready = self.times < bound
        if not ready.any():
            return _output(shape, *_no_output(shape))
        times, counts, deltas = self.times[ready], self.counts[ready], self.deltas[:, ready]
        self.times, self.counts = self.times[~ready], self.counts[~ready]
        self.deltas = self.deltas[:, ~ready]
        return _output(shape, *self._fold(shape, times, counts, deltas))

    def _close_rows(self, shape, bound) -> None:
        """The rows of instants before ``bound`` become elements: their entries and exits."""
        if not self.rows:
            return
        t = self.rows[shape.rowtime]
        closing = t < bound
        if not closing.any():
            return
        closed = {c: a[closing] for c, a in self.rows.items()}
        left = ~closing
        self.rows = {c: a[left] for c, a in self.rows.items()} if left.any() else {}
        times, counts, deltas = shape.events(distinct(closed, shape.columns, shape.rowtime))
        self.times = np.concatenate([self.times, times])
        self.counts = np.concatenate([self.counts, counts])
        self.deltas = np.concatenate([self.deltas, deltas], axis=1)

    def _fold(self, shape, times, counts, deltas):
        """The group at each instant of ``times`` (in order): (instants, before/after counts,
        before/after sums)."""
        order = np.argsort(times, kind="stable")
        times, counts, deltas = times[order], counts[order], deltas[:, order]
        instants, starts = np.unique(times, return_index=True)
        dc = np.add.reduceat(counts, starts)
        if _may_overflow(self.totals, deltas):
            deltas = deltas.astype(object)  # Python integers: exact
        dv = np.add.reduceat(deltas, starts, axis=1)
        after_n = self.count + np.cumsum(dc)
        before_n = np.concatenate([[self.count], after_n[:-1]])
        start = np.array(self.totals, dtype=dv.dtype).reshape(-1, 1)
        after = start + np.cumsum(dv, axis=1)
        before = np.concatenate([start, after[:, :-1]], axis=1)
        _check_fits(shape, after, after_n > 0)
        self.count = int(after_n[-1])
        self.totals = [int(v) for v in after[:, -1]]
        return instants, before_n, after_n, before, after


def _may_overflow(totals, deltas) -> bool:
    """Whether a running sum could leave int64 while folding ``deltas``."""
    if not deltas.size:
        return False
    reach = np.abs(deltas.astype(np.float64)).sum(axis=1) + np.abs(
        np.array(totals, dtype=np.float64))
    return bool((reach >= 2.0 ** 62).any())


def _check_fits(shape, after, held) -> None:
    """An INT or LONG sum out of its type's range at an instant where the group holds something
    raises IntOverflow (the live runtime's error), at the first such instant."""
    for s, values in zip(shape.sums, after):
        low, high = _range(s.result_type)
        bad = held & ((values < low) | (values > high))
        if bad.any():
            s.result_type.fit(int(values[np.argmax(bad)]), operator="plus")


def _range(t):
    return -(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1


def _no_output(shape):
    empty = np.zeros(0, dtype=np.int64)
    sums = np.zeros((len(shape.sums), 0), dtype=np.int64)
    return empty, empty, empty, sums, sums


def _output(shape, instants, before_n, after_n, before, after) -> dict:
    """The output columns of the folded instants: ``-`` rows where the group's tuple changed
    and it held something before, ``+`` rows where it changed and holds something after."""
    was, now = before_n > 0, after_n > 0
    changed = (was != now) | (now & (before != after).any(axis=0))
    minus, plus = changed & was, changed & now
    parts = []
    if shape.emit in ("changes", "dstream"):
        parts.append((minus, before, "-"))
    if shape.emit in ("changes", "istream"):
        parts.append((plus, after, "+"))
    out = {shape.at: np.concatenate([instants[m] for m, _, _ in parts])}
    for i, s in enumerate(shape.sums):
        out[s.name] = np.concatenate([values[i][m] for m, values, _ in parts]).astype(np.int64)
    if shape.emit == "changes":
        out["kind"] = np.repeat(_SIGNS, [int(minus.sum()), int(plus.sum())])
    return out


def distinct(rows: dict, columns, rowtime) -> dict:
    """``rows`` (column -> array) without repeats: equal rows are one element (set semantics).
    Rows can only be equal at one instant, so only rows sharing their instant are compared."""
    t = rows[rowtime]
    if len(t) < 2:
        return rows
    order = np.argsort(t, kind="stable")
    same = t[order][1:] == t[order][:-1]
    if not same.any():
        return rows
    shared = order[np.concatenate([same, [False]]) | np.concatenate([[False], same])]
    keys = [rows[c][shared] for c in columns if c != rowtime] + [t[shared]]
    ranked = shared[np.lexsort(keys)]
    repeat = np.ones(len(ranked) - 1, dtype=bool)
    for c in columns:
        values = rows[c][ranked]
        repeat &= values[1:] == values[:-1]
    if not repeat.any():
        return rows
    keep = np.ones(len(t), dtype=bool)
    keep[ranked[1:][repeat]] = False
    return {c: a[keep] for c, a in rows.items()}


# ------------------------------------------------------------------------------ state

#: the Spark schema of a key's state: a JSON header, the waiting rows as an Arrow IPC stream,
#: the entries and exits ahead as int64 rows (instants, count deltas, sum deltas)
STATE_SCHEMA = "header string, rows binary, events binary"


def encode(state: KeyState, shape: WindowSums) -> tuple:
    """A key's state as data (no pickle): see :data:`STATE_SCHEMA`."""
    rows, layout = _rows_bytes(state.rows, shape.columns)
    header = json.dumps({"version": _STATE_VERSION, "count": state.count,
                         "totals": state.totals, "events": int(len(state.times)),
                         "rows": layout})
    events = np.concatenate([state.times.reshape(1, -1), state.counts.reshape(1, -1),
                             state.deltas.astype(np.int64)]).astype(np.int64)
    return header, rows, events.tobytes()


def decode(saved: tuple, shape: WindowSums) -> KeyState:
    """The inverse of :func:`encode`."""
    header, rows, events = saved
    head = json.loads(header)
    if head.get("version") != _STATE_VERSION:
        from sira.errors import CheckpointError
        raise CheckpointError(path="Spark state store", reason=f"a live query's state of "
                              f"version {head.get('version')} (this sira reads version "
                              f"{_STATE_VERSION})")
    matrix = np.frombuffer(events, dtype=np.int64).reshape(2 + len(shape.sums), head["events"])
    return KeyState(_rows_of(rows, head["rows"], shape.columns), matrix[0].copy(),
                    matrix[1].copy(), matrix[2:].copy(), head["count"], head["totals"])


def _rows_bytes(rows: dict, columns):
    """The waiting rows as bytes and their layout: each column's raw values when every column
    is numeric or boolean (layout: the number of rows and the dtypes), else an Arrow IPC
    stream (layout: "arrow")."""
    if not rows:
        return b"", None
    arrays = [rows[c] for c in columns]
    if all(a.dtype.kind in "iufb" for a in arrays):
        return b"".join(a.tobytes() for a in arrays), \
            {"n": int(len(arrays[0])), "dtypes": [a.dtype.str for a in arrays]}
    import pyarrow as pa
    table = pa.table({c: pa.array(a) for c, a in zip(columns, arrays)})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue(), "arrow"


def _rows_of(data: bytes, layout, columns) -> dict:
    """The inverse of :func:`_rows_bytes`."""
    if layout is None:
        return {}
    if layout != "arrow":
        out, at, n = {}, 0, layout["n"]
        for c, dtype in zip(columns, layout["dtypes"]):
            kind = np.dtype(dtype)
            out[c] = np.frombuffer(data, dtype=kind, count=n, offset=at).copy()
            at += n * kind.itemsize
        return out
    import pyarrow as pa
    table = pa.ipc.open_stream(data).read_all()
    return {name: table.column(name).to_numpy(zero_copy_only=False)
            for name in table.column_names}


# ------------------------------------------------------------------------------ the handler

class VectorHandler(ReportingHandler):
    """The function ``applyInPandasWithState`` calls per key on the vectorised path: late rows
    counted (and kept, for ``late_rows_sink``), on-time rows added, the instants the bound has
    passed folded, the state saved (or removed when the key holds nothing) and the timeout
    set for the next instant waiting."""

    def __init__(self, shape: WindowSums, key: tuple, keep_late_rows: bool = False):
        self.shape = shape
        self.key = key  # the group's attributes in the order Spark passes their values
        self.keep_late_rows = keep_late_rows
        self.names = shape.heading.names

    def handle(self, key, frames, state):
        shape = self.shape
        watermark = state.getCurrentWatermarkMs()
        bound = bound_of(watermark)
        held = decode(state.get, shape) if state.exists else KeyState.fresh(shape)
        late, late_rows = 0, ([] if self.keep_late_rows else None)
        if not state.hasTimedOut:
            for pdf in frames:
                if len(pdf):
                    late += self._take(held, pdf, bound, late_rows)
        out = held.close(shape, bound)
        if held.at_rest():
            state.remove()
        else:
            state.update(encode(held, shape))
            pending = held.pending(shape)
            if pending is not None:
                state.setTimeoutTimestamp(timeout_of(pending, watermark))
        if len(out[shape.at]):
            yield self._frame(key, out)
        yield from late_frames(self.names, late, late_rows)

    def _take(self, held: KeyState, pdf, bound, late_rows) -> int:
        """Add a frame's on-time rows to ``held``; the number of late ones."""
        shape = self.shape
        rows = {c: pdf[c].to_numpy() for c in shape.columns}
        for c, values in rows.items():
            if values.dtype.kind not in "iub":  # integers and booleans hold no NULL
                check_no_nulls(pdf, (c,), shape.stream)
        t = rows[shape.rowtime]
        late = 0
        if bound is not None:
            on_time = t >= bound
            late = len(t) - int(on_time.sum())
            if late:
                if late_rows is not None:
                    late_rows.extend(self._late_rows(rows, ~on_time, bound))
                rows = {c: a[on_time] for c, a in rows.items()}
        if len(rows[shape.rowtime]):
            held.add(rows)
        return late

    def _late_rows(self, rows, mask, bound) -> list:
        shape = self.shape
        picked = {c: a[mask].tolist() for c, a in rows.items()}
        return [late_row_json(shape.stream, picked[shape.rowtime][i], bound,
                              {c: picked[c][i] for c in shape.columns})
                for i in range(int(mask.sum()))]

    def _frame(self, key, out: dict):
        """The output rows as a pandas frame: the group's attributes (the key's values) and the
        folded columns (and no late row)."""
        import pandas as pd
        n = len(out[self.shape.at])
        for name, value in zip(self.key, key):
            out[name] = np.full(n, value)
        columns = {name: out[name] for name in self.names}
        if self.keep_late_rows:
            columns[LATE_ROW] = pd.Series([None] * n, dtype=object)
        return pd.DataFrame(columns)
