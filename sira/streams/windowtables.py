"""Window tables on live streams: ``tumble``, ``hop``, ``cumulate`` and ``session`` (design.md,
"Streams and windows") and a SUMMARIZEBY per window over them, as dataflow operators.

* ``tumble``/``hop``/``cumulate`` tag each element with its windows as soon as it arrives: an
  element's windows are known from its rowtime alone (:class:`WindowTableRows`). The output is
  a stream travelling with the same rowtime.
* ``session`` tags an element only once its session has closed, i.e. once the bound has passed
  the session's last element plus the gap (an element at ``last + gap`` still joins it, as PACK
  of ``[t, t+gap)`` merges adjacent intervals): :class:`SessionRows`. Its output is a stream
  travelling with ``window_end``, since sessions close in the order of their ends.
* ``summarizeby(W, (window_start, window_end, k...), specs)`` over a window table (through any
  RESTRICT/EXTEND/PROJECT/RENAME keeping the two window attributes) emits one tuple per group
  once the group is final: when the bound reaches ``window_end`` for tumbling, hopping and
  cumulating windows (an element at ``t`` lies in windows ending after ``t``), when it passes
  ``window_end`` for sessions (:class:`WindowTableSummarize`). As Flink requires, the BY list
  holds ``window_start`` and ``window_end``. Its output is a stream travelling with
  ``window_end``.

Results equal the batch algebra: the window attributes come from the batch engine's own
functions, and each aggregate is folded as the batch engine folds it (integer sums, max, min,
and, or are kept running; the others fold the group's members when it closes).

    >>> import sira
    >>> from sira.streams import StreamEngine
    >>> engine = StreamEngine()
    >>> s = engine.create_stream("s", {"k": sira.INT, "v": sira.INT})
    >>> q = engine.register("summarizeby(tumble(s, ts, size(10)), (window_start, window_end, k),"
    ...                     " (total(plus(v))))")
    >>> p = s.attach()
    >>> p.insert_many([({"k": 1, "v": 2}, 3), ({"k": 1, "v": 5}, 8), ({"k": 1, "v": 1}, 12)])
    >>> q.results()                     # [0, 10) is final: nothing earlier than 12 can come
    [{'k': 1, 'total': 7, 'window_end': 10, 'window_start': 0}]
"""

from __future__ import annotations

from sortedcontainers import SortedList

from ..algebra.aggregation import SummarizeBy, aggregations
from ..algebra.basic import Extend, Project, Rename, Restrict
from ..algebra.windows import WINDOW_ATTRIBUTES, WindowTable
from ..expressions.library import fold
from ..engine.guards import Guard
from ..engine.windows import (_most_windows, _Time, _window_values, _windows_of,
                              windows_holding)
from ..expressions.evaluate import compile_row
from ..expressions.nodes import attributes_used
from .operators import (LIVE_MAX_TUPLES, NotSupportedLive, Operator, _relation_of, _reorder,
                        row_getter_tuple)
from .temporal import _Running

#: the row operators a SUMMARIZEBY may look through to find its window table
_ROW_OPERATORS = (Restrict, Extend, Project, Rename)


def window_table_below(node):
    """The window table feeding ``node`` through row operators that keep ``window_start`` and
    ``window_end`` untouched, or None."""
    while isinstance(node, _ROW_OPERATORS):
        if isinstance(node, Rename) and set(dict(node.pairs)) & set(WINDOW_ATTRIBUTES):
            return None
        if isinstance(node, Project) and not {"window_start", "window_end"} <= set(node.names):
            return None
        node = node.source
    return node if isinstance(node, WindowTable) else None


def summarizes_window_table(node) -> bool:
    """Whether ``node`` is a SUMMARIZEBY whose source is a window table (through row
    operators): the live runtime computes it per window."""
    return isinstance(node, SummarizeBy) and node.using is None and \
        window_table_below(node.source) is not None


def rowtime_of(node, streams, rowtime_of_source):
    """The attribute a window table's (or its summary's) output travels with: the element's
    rowtime for tumbling, hopping and cumulating windows, ``window_end`` for sessions and for
    summaries, which leave in the order their windows close."""
    if isinstance(node, WindowTable):
        if node.kind == "session":
            return "window_end"
        return rowtime_of_source(node.source, streams)
    if summarizes_window_table(node):
        return "window_end" if "window_end" in node.heading else None
    return None


def build_window_table(node, build, streams, rowtime_of_source):
    """The operator computing ``node`` (a window table, or a SUMMARIZEBY over one) on its
    source stream, already built by ``build``; NotSupportedLive for what cannot run."""
    if isinstance(node, WindowTable):
        src, kind = build(node.source)
        if kind != "stream":
            raise NotSupportedLive(node=f"{node.kind.upper()} of something not a stream")
        rowtime = rowtime_of_source(node.source, streams)
        if node.ts != rowtime:
            raise NotSupportedLive(node=f"a {node.kind.upper()} on '{node.ts}', which is not "
                                   f"the rowtime of its stream ('{rowtime}')")
        op = SessionRows(node) if node.kind == "session" else WindowTableRows(node)
        src.connect(op)
        return op
    table = window_table_below(node.source)
    missing = [n for n in ("window_start", "window_end") if n not in node.by]
    if missing:
        raise NotSupportedLive(node=f"a SUMMARIZEBY over {table.kind.upper()} whose BY list "
                               f"lacks {' and '.join(missing)} (a live summary is per window)")
    if node.pack_list:
        raise NotSupportedLive(node="a SUMMARIZEBY over a window table that packs interval "
                               "attributes")
    if any(set(WINDOW_ATTRIBUTES) & attributes_used(e) for _, _, e in node.specs):
        raise NotSupportedLive(node="a SUMMARIZEBY aggregating a window attribute")
    src, kind = build(node.source)
    op = WindowTableSummarize(node, session=table.kind == "session")
    src.connect(op)
    return op


class WindowTableRows(Operator):
    """TUMBLE, HOP, CUMULATE on a stream: each element with each window holding its rowtime,
    at once (the output keeps the element's rowtime)."""

    def __init__(self, node):
        super().__init__(node, node.heading)
        self.src_heading = node.source.heading

    def compile(self):
        node, h = self.node, self.src_heading
        time = _Time(node.ts_type)
        where = {n: i for i, n in enumerate(h.names + WINDOW_ATTRIBUTES)}
        order = _reorder([where[n] for n in node.heading.names])
        return (h.index(node.ts), time, _window_values(node, time), order)

    def on_bound(self, b, port):
        self.emit_bound(b)

    def on_rows(self, rows, port):
        ts, time, values, order = self.functions()
        node = self.node
        out = []
        if len(rows) * _most_windows(node) > LIVE_MAX_TUPLES:  # counted before they are made
            Guard(node.kind.upper(), LIVE_MAX_TUPLES).check(
                sum(windows_holding(node, time, row[ts]) for _, row in rows))
        for t, row in rows:
            for start, end in _windows_of(node, time, row[ts]):
                tagged = row + values(row, start, end)
                out.append((t, order(tagged) if order is not None else tagged))
        if out:
            self.emit_rows(out)


class SessionRows(Operator):
    """SESSION on a stream: per partition, elements join the open session while they come at
    most ``gap`` after its last one; a session is emitted (each element tagged with it) once
    the bound has passed ``last + gap``, travelling with its ``window_end``.

    ``open`` maps a partition to ``[start, last, [rows]]``; ``closed`` holds sessions a later
    element has already ended (``(end, start, rows)``), emitted at the next bound.
    """

    def __init__(self, node):
        super().__init__(node, node.heading)
        self.src_heading = node.source.heading
        self.open: dict = {}
        self.closed: list = []
        self.bound = None

    def compile(self):
        node, h = self.node, self.src_heading
        time = _Time(node.ts_type)
        where = {n: i for i, n in enumerate(h.names + WINDOW_ATTRIBUTES)}
        order = _reorder([where[n] for n in node.heading.names])
        part = row_getter_tuple([h.index(n) for n in node.partition])
        return (h.index(node.ts), time, _window_values(node, time), order, part,
                node.units("size"))

    def on_rows(self, rows, port):
        ts, time, _, _, part, gap = self.functions()
        for _, row in rows:
            t = row[ts]
            key = part(row)
            session = self.open.get(key)
            if session is not None and t > time.plus(session[1], gap):
                start, last, members = self.open.pop(key)
                self.closed.append((time.plus(last, gap), start, members))
                session = None
            if session is None:
                self.open[key] = [t, t, [row]]
            else:
                session[1] = max(session[1], t)
                session[2].append(row)

    def on_bound(self, b, port):
        if self.bound is not None and b <= self.bound:
            return
        self.bound = b
        _, time, values, order, _, gap = self.functions()
        ending = self.closed
        self.closed = []
        for key in [k for k, (_, last, _) in self.open.items() if time.plus(last, gap) < b]:
            start, last, members = self.open.pop(key)
            ending.append((time.plus(last, gap), start, members))
        out = []
        for end, start, members in sorted(ending, key=lambda s: s[:2]):
            for row in members:
                tagged = row + values(row, start, end)
                out.append((end, order(tagged) if order is not None else tagged))
        if out:
            self.emit_rows(out)
        self.emit_bound(b)

    def pending(self):
        """The earliest instant a bound must pass to let something out (None: nothing held)."""
        _, time, _, _, _, gap = self.functions()
        ends = [end for end, _, _ in self.closed]
        ends += [time.plus(last, gap) for _, last, _ in self.open.values()]
        return min(ends, default=None)


class WindowTableSummarize(Operator):
    """SUMMARIZEBY per window over a window table: each group's aggregates, emitted once no
    later element can join it (see the module docstring), travelling with ``window_end``.

    ``groups`` maps a group key (the BY values) to ``[members or None, size, running]`` as in
    :class:`~sira.streams.temporal.TemporalSummarize`; ``ends`` orders the open groups by
    ``window_end``.
    """

    def __init__(self, node, session: bool):
        super().__init__(node, node.heading)
        self.src_heading = node.source.heading
        self.session = session  # a session's group is final only once the bound passes its end
        self.groups: dict = {}
        self.ends = SortedList()  # (window_end, key) of the open groups
        self.bound = None

    def compile(self):
        node, h = self.node, self.src_heading
        key = row_getter_tuple([h.index(n) for n in node.by])
        aggs = aggregations(node.specs, h, "SUMMARIZEBY")
        fns = [compile_row(e, h, _relation_of) for _, _, e in node.specs]
        where = {n: i for i, n in enumerate(list(node.by) + [n for n, _, _ in node.specs])}
        folds = not all(_Running.supports(a) for a in aggs)
        return (key, aggs, fns, _reorder([where[n] for n in node.heading.names]), folds,
                list(node.by).index("window_end"))

    def on_rows(self, rows, port):
        key_of, aggs, fns, _, folds, end_at = self.functions()
        groups = self.groups
        for _, row in rows:
            k = key_of(row)
            group = groups.get(k)
            if group is None:
                group = groups[k] = [set() if folds else None, 0, [_Running.of(a) for a in aggs]]
                self.ends.add((k[end_at], k))
            if folds:
                if row in group[0]:
                    continue
                group[0].add(row)
            group[1] += 1
            for r, f in zip(group[2], fns):
                if r is not None:
                    r.change(f(row), 1)

    def on_bound(self, b, port):
        if self.bound is not None and b <= self.bound:
            return
        self.bound = b
        _, aggs, fns, order, _, _ = self.functions()
        out = []
        ends = self.ends
        while ends and (ends[0][0] < b or (ends[0][0] == b and not self.session)):
            end, k = ends.pop(0)
            members, _, running = self.groups.pop(k)
            values = tuple([r.value() if r is not None else fold(a, [f(m) for m in members])
                            for r, a, f in zip(running, aggs, fns)])
            value = k + values
            out.append((end, order(value) if order is not None else value))
        if out:
            self.emit_rows(out)
        self.emit_bound(b)

    def pending(self):
        """The earliest instant a bound must pass to let something out (None: nothing held)."""
        if not self.ends:
            return None
        end = self.ends[0][0]
        return end if self.session else end - 1


# ------------------------------------------------------------------------------ checkpoints

def _register_checkpoint_codecs() -> None:
    """Teach the data-only checkpoint format (:mod:`sira.streams.checkpoint`) these
    operators' state, the way it knows the others'."""
    from . import checkpoint as ck

    def rows_of(op):
        return ck._Rows(op.src_heading)

    def enc_session(op):
        rows = rows_of(op)
        keys = ck._Rows([op.src_heading.type_of(n) for n in op.node.partition])
        point = op.node.ts_type
        return {"open": [[keys.enc(k), ck.encode_value(point, start),
                          ck.encode_value(point, last), rows.enc_all(members)]
                         for k, (start, last, members) in op.open.items()],
                "closed": [[ck.encode_value(point, end), ck.encode_value(point, start),
                            rows.enc_all(members)] for end, start, members in op.closed],
                "bound": ck.encode_time(op.bound)}

    def dec_session(op, data):
        rows = rows_of(op)
        keys = ck._Rows([op.src_heading.type_of(n) for n in op.node.partition])
        point = op.node.ts_type
        op.open = {keys.dec(k): [ck.decode_value(point, start), ck.decode_value(point, last),
                                 rows.dec_all(members)]
                   for k, start, last, members in ck._list(data["open"], "open")}
        op.closed = [(ck.decode_value(point, end), ck.decode_value(point, start),
                      rows.dec_all(members))
                     for end, start, members in ck._list(data["closed"], "closed")]
        op.bound = ck.decode_time(data["bound"])

    def summary_codecs(op):
        h = op.src_heading
        inputs = [ck.infer_type(e, h) for _, _, e in op.node.specs]
        return ck._Rows([h.type_of(n) for n in op.node.by]), ck._Rows(h), ck._Rows(inputs)

    def enc_summary(op):
        keys, members, inputs = summary_codecs(op)
        return {"groups": [[keys.enc(k), None if m is None else members.enc_set(m), size,
                            [ck._enc_running(r, t) for r, t in zip(running, inputs.types)]]
                           for k, (m, size, running) in op.groups.items()],
                "bound": ck.encode_time(op.bound)}

    def dec_summary(op, data):
        keys, members, inputs = summary_codecs(op)
        aggs = op.functions()[1]
        end_at = list(op.node.by).index("window_end")
        op.groups, op.ends = {}, SortedList()
        for k, m, size, running in ck._list(data["groups"], "groups"):
            key = keys.dec(k)
            states = ck._list(running, "running aggregates")
            ck._expect(len(states) == len(aggs), "one running state per aggregate")
            op.groups[key] = [None if m is None else set(members.dec_all(m)), ck._count(size),
                              [ck._dec_running(_Running.of(a), s, t)
                               for a, s, t in zip(aggs, states, inputs.types)]]
            op.ends.add((key[end_at], key))
        op.bound = ck.decode_time(data["bound"])

    ck._FIELDS[WindowTableRows] = {"src_heading"}
    ck._FIELDS[SessionRows] = {"src_heading", "open", "closed", "bound"}
    ck._FIELDS[WindowTableSummarize] = {"src_heading", "session", "groups", "ends", "bound"}
    ck._STATES[WindowTableRows] = (ck._no_state, ck._restore_nothing)
    ck._STATES[SessionRows] = (enc_session, dec_session)
    ck._STATES[WindowTableSummarize] = (enc_summary, dec_summary)


_register_checkpoint_codecs()

__all__ = ["SessionRows", "WindowTableRows", "WindowTableSummarize", "build_window_table",
           "rowtime_of", "summarizes_window_table", "window_table_below"]
