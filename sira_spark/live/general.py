"""The general path: each key's part of the live runtime's own dataflow
(:func:`sira.streams.runtime.compile_query`) in ``applyInPandasWithState``.

The handler restores the key's operators from their data-only checkpoint state (kept in Spark's
state store as JSON), feeds them the key's on-time rows (by source, in rowtime order) and the
bound the watermark encodes, and returns the results that became final. Every query the live
runtime runs takes this path; the vectorised and native paths are faster special cases that
give the same rows.

A row equal to one already fed at the same instant (a source without an arrival attribute can
repeat one, in a later micro-batch) is one element: the handler remembers the rows it fed at
instants the bound has not passed yet and leaves repeats out.
"""

from __future__ import annotations

import hashlib
import json

from .common import (LATE_ROW, SOURCE, ReportingHandler, StreamShape, bound_of,
                     check_no_nulls, late_frames, late_row_json, pandas_value, plain_column,
                     sira_values, timeout_of)

_COMPILED: dict = {}  # per Python worker: plan digest -> (LiveQuery, fresh state)

#: the Spark schema of a key's state on the general path
STATE_SCHEMA = "state string"


class GeneralHandler(ReportingHandler):
    """The function ``applyInPandasWithState`` calls per key: restores the key's dataflow state,
    feeds its on-time rows and the bound, returns the results that became final, saves the
    state (or removes it when nothing is held) and sets the timeout for the next release."""

    def __init__(self, node, streams, relations, key, keep_late_rows: bool = False):
        self.text = repr(node)
        self.streams = [(name, heading, rowtime) for name, heading, rowtime in streams]
        self.relations = relations
        self.key = key
        self.keep_late_rows = keep_late_rows
        self.names = node.heading.names
        self.attributes = node.heading.attributes
        self.digest = hashlib.sha256(json.dumps(
            [self.text, [(n, str(h), r) for n, h, r in self.streams],
             sorted(self.relations)]).encode()).hexdigest()

    def query(self):
        """The compiled live query (once per Python worker) and its fresh operators' state."""
        found = _COMPILED.get(self.digest)
        if found is None:
            import sira
            from sira.streams.checkpoint import operators_of
            from sira.streams.runtime import compile_query
            shapes = {n: StreamShape(n, h, r) for n, h, r in self.streams}
            catalog = {n: h for n, h, _ in self.streams}
            catalog.update({n: r.heading for n, r in self.relations.items()})
            q = compile_query(sira.parse(self.text, catalog), shapes, self.relations)
            q.operator_list = operators_of(q)  # a fixed order: states are saved by position
            found = _COMPILED[self.digest] = (q, encode_state(q))
        return found

    def handle(self, key, frames, state):
        import pandas as pd
        q, fresh = self.query()
        watermark = state.getCurrentWatermarkMs()
        b = bound_of(watermark)
        saved = json.loads(state.get[0]) if state.exists else {"ops": fresh, "recent": {}}
        decode_state(q, saved["ops"])
        recent = self._recent(saved.get("recent", {}), b)
        late, late_rows = 0, ([] if self.keep_late_rows else None)
        if not state.hasTimedOut:
            parts = [f for f in frames if len(f)]
            pdf = pd.concat(parts, ignore_index=True) if parts else None
            if pdf is not None:
                late = self._feed(q, pdf, b, recent, late_rows)
        if b is not None:
            for sources in q.sources.values():
                for source in sources:
                    source.emit_bound(b)
        results = q.sink.results
        q.sink.results = []
        ops = encode_state(q)
        pending = pending_instant(q)
        if pending is None and not any(recent.values()) and _at_rest(ops, fresh):
            state.remove()
        else:
            state.update((json.dumps({"ops": ops, "recent": self._encode_recent(recent)}),))
            if pending is not None:
                state.setTimeoutTimestamp(timeout_of(pending, watermark))
        if results:
            yield self._frame(results)
        yield from late_frames(self.names, late, late_rows)

    def _recent(self, saved: dict, b) -> dict:
        """The rows fed at instants the bound has not passed (by source index), as sets."""
        from sira.streams.checkpoint import _Rows
        out = {}
        for i, (_, heading, rowtime) in enumerate(self.streams):
            ts = heading.index(rowtime)
            rows = _Rows(heading).dec_all(saved.get(str(i), []))
            out[i] = {r for r in rows if b is None or r[ts] >= b}
        return out

    def _encode_recent(self, recent: dict) -> dict:
        from sira.streams.checkpoint import _Rows
        return {str(i): _Rows(self.streams[i][1]).enc_set(rows)
                for i, rows in recent.items() if rows}

    def _feed(self, q, pdf, b, recent, late_rows) -> int:
        """Push this key's on-time rows, by source, in rowtime order (repeats left out); the
        late ones are counted (and kept, for the late rows table) and left out."""
        late = 0
        for i, (name, heading, rowtime) in enumerate(self.streams):
            part = pdf[pdf[SOURCE] == i]
            if not len(part):
                continue
            check_no_nulls(part, heading.names, name)
            columns = [_values(part[n], t) for n, t in heading.attributes]
            ts = heading.index(rowtime)
            bodies = sorted(dict.fromkeys(zip(*columns)), key=lambda r: r[ts])
            on_time = [body for body in bodies if b is None or body[ts] >= b]
            if late_rows is not None:
                late_rows.extend(late_row_json(name, body[ts], b, dict(zip(heading.names, body)))
                                 for body in bodies if b is not None and body[ts] < b)
            late += len(bodies) - len(on_time)
            fresh = [body for body in on_time if body not in recent[i]]
            if fresh:
                recent[i].update(fresh)
                for source in q.sources.get(name, ()):
                    source.feed_train(fresh, None)
        return late

    def _frame(self, results):
        """The results as a pandas frame (intervals, tuples and AVERAGEs as structs,
        relations as arrays of structs, TIMESTAMPs as microseconds:
        :func:`~sira_spark.live.common.pandas_type`)."""
        import pandas as pd
        columns = {}
        for i, (n, t) in enumerate(self.attributes):
            values = [r[i] for r in results]
            if not plain_column(t):
                values = [pandas_value(t, v) for v in values]
            columns[n] = values
        if self.keep_late_rows:
            columns[LATE_ROW] = [None] * len(results)
        return pd.DataFrame(columns)


def _values(series, t) -> list:
    """A column's values as sira values of type ``t``."""
    if plain_column(t):
        return [v.item() if hasattr(v, "item") else v for v in series.tolist()]
    return sira_values(series.tolist(), t)


# ------------------------------------------------------------------------------ state

def _operators(query) -> list:
    from sira.streams.checkpoint import operators_of
    found = getattr(query, "operator_list", None)
    return found if found is not None else operators_of(query)


def encode_state(query) -> list:
    """The state of every operator of a compiled live query, as checkpoint JSON data."""
    from sira.streams import checkpoint as ck
    return [{"ports": ck._encode_ports(op), "state": ck._STATES[type(op)][0](op)}
            for op in _operators(query)]


def decode_state(query, saved: list) -> None:
    """Restore every operator's state from :func:`encode_state`'s data."""
    from sira.streams import checkpoint as ck
    for op, data in zip(_operators(query), saved):
        ck._decode_ports(op, data["ports"])
        ck._STATES[type(op)][1](op, data["state"])


def _at_rest(ops, fresh) -> bool:
    """Whether the operators hold nothing but what a fresh dataflow holds (their guards and
    the instant they last saw excepted)."""
    def strip(states):
        out = []
        for data in states:
            state = {k: v for k, v in data["state"].items()
                     if k not in ("instant", "seen", "bound", "out_bound", "bounds", "counter")}
            out.append(state)
        return out
    return strip(ops) == strip(fresh)


def pending_instant(query):
    """The earliest instant the bound must pass for some operator of ``query`` to let
    something out, or None when nothing waits."""
    from sira.streams.operators import Merge
    from sira.streams.temporal import WindowOp, WindowSummarize, _Aligned
    times = []
    for op in _operators(query):
        if isinstance(op, (WindowOp, WindowSummarize)):
            if op.buffer:
                times.append(op.buffer[0][0])
            if op.exits:
                times.append(op.exits[0][0])
        if isinstance(op, WindowOp) and op.events:
            times.append(op.events.keys()[0])
        if isinstance(op, _Aligned) and op.pending:
            times.append(op.pending.keys()[0])
        if isinstance(op, Merge) and op.pending:
            times.append(op.pending[0][0])
        if hasattr(op, "pending") and callable(getattr(op, "pending")):
            t = op.pending()
            if t is not None:
                times.append(t)
    return min(times, default=None)
