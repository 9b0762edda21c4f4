"""Fused execution of continuous queries: one function per train instead of a call per operator.

:func:`~sira.streams.runtime.compile_query` builds a dataflow of operators that hand batches to
each other through ``emit_rows``/``emit_changes``/``emit_bound``, each checking what it
receives against what its input promised. For the usual shape of a live query, a stream
through RESTRICT/EXTEND/PROJECT/RENAME (and JOIN, SEMIJOIN, SEMIMINUS with a constant
relation) into a CQL window, with or without a running SUMMARIZEBY over it, and out through
ISTREAM/DSTREAM/CHANGES, a :class:`FusedChain` runs the same operators' steps in one loop per
train:

* the rows go through the row operators' compiled functions, stage after stage, with no call
  between operators;
* the window closes the instants the bound passes (:meth:`WindowOp.close` /
  :meth:`WindowSummarize.close`, the very code the operator runs on its own);
* ISTREAM/DSTREAM/CHANGES and the sink only build result rows when someone reads them (a query
  registered with ``keep=False`` and no subscriber keeps none).

Nothing is generated from the query's text: the chain is composed of the operators' own
compiled functions (closures) at compile time. Anything the chain does not cover (a UNION of
streams, a temporal JOIN, a window over a window...) gets the batches through the general
protocol from the last fused operator on.

**Same state, same checks.** A fused chain keeps no state of its own: every change it makes is
to the operators' own fields, with exactly the values the operator-by-operator protocol would
leave after each train, the inputs' guards (``ports``) included. So a fused query checkpoints,
restores and continues exactly like an unfused one (the checkpoint content is the same), the
two may take turns (``finish`` runs the operators' own protocol), and the train entering the
chain is checked against its first operator's guard as the protocol would check it. Inputs
are validated before they reach a query (heading, types, lateness, positions); overflow and
the other run-time failures are raised by the same code in both paths, before any result of
the train reaches the sink.

    >>> import sira
    >>> from sira.streams import StreamEngine
    >>> engine = StreamEngine()
    >>> s = engine.create_stream("s", {"k": sira.INT, "v": sira.INT})
    >>> q = engine.register("changes(summarizebyusing(window(restrict(s, gt(v, 0)), ts, "
    ...                     "range(10)), (k, during), (total(plus(v))), (during)), at)")
    >>> q.fused
    True
    >>> s.attach().insert_many([({"k": 1, "v": 2}, 1), ({"k": 1, "v": 3}, 4)])
    >>> [(r["at"], r["kind"], r["total"]) for r in q.results()]
    [(1, '+', 2)]
"""

from __future__ import annotations

from ..algebra.basic import Project, Restrict
from .operators import RowMap, Sink, StreamJoin, ToStream
from .temporal import WindowOp, WindowSummarize, _buffer


def pushes(sources: dict, fuse: bool = True) -> dict:
    """For each stream a query reads, the functions taking its trains ``(bodies, bound)``: a
    :class:`FusedChain`'s ``push`` where the operators from that source allow one (and
    ``fuse``), else the source's own ``feed_train``."""
    out = {}
    for name, srcs in sources.items():
        out[name] = []
        for source in srcs:
            chain = FusedChain.of(source) if fuse else None
            out[name].append(source.feed_train if chain is None else chain.push)
    return out


def _single(op):
    """The one operator ``op`` feeds (on its port 0), or None."""
    if len(op.downstream) != 1:
        return None
    nxt, port = op.downstream[0]
    return nxt if port == 0 else None


class FusedChain:
    """A source, the stream operators after it, optionally a window (or a window with its
    running summary) and optionally ISTREAM/DSTREAM/CHANGES into the sink, run as one.

    Built by :meth:`of`; ``push(bodies, bound)`` does what ``source.feed_train(bodies,
    bound)`` does.
    """

    def __init__(self, source, maps: list, window, tail):
        self.source = source
        self.at = source.at  # the rowtime's position in its rows
        self.maps = maps  # RowMap (on a stream) or StreamJoin, in order
        self.window = window  # WindowOp or WindowSummarize after the maps, or None
        self.to_stream, self.sink = tail if tail is not None else (None, None)
        self.first = (maps or [window])[0]  # the operator the source feeds
        self.last = window if window is not None else maps[-1]  # the general protocol after it
        # the guards (ports, [bound, latest]) the protocol would update, in the operators'
        # own lists (restoring a checkpoint updates them in place)
        self.entry = self.first.ports[0]
        self.bounded = [op.ports[0] for op in maps + ([window] if window is not None else [])]
        if tail is not None:
            self.bounded_after = [self.to_stream.ports[0], self.sink.ports[0]]
        self.stages = None  # compiled on the first train, as the operators compile theirs
        self.one_by_one = None
        self.closing = None  # a running sum's compiled functions (WindowSummarize._close_sum)
        self.only_filter = None  # the condition when the only stream operator is a RESTRICT
        self.window_guard = None if window is None else window.ports[0]

    @classmethod
    def of(cls, source):
        """The chain from ``source``, or None when the operator it feeds cannot be fused."""
        maps, op = [], _single(source)
        while isinstance(op, StreamJoin) or (isinstance(op, RowMap) and not op.temporal):
            maps.append(op)
            op = _single(op)
        window = op if isinstance(op, (WindowOp, WindowSummarize)) else None
        tail = None
        if window is not None:
            to_stream = _single(window)
            if isinstance(to_stream, ToStream) and isinstance(_single(to_stream), Sink):
                tail = (to_stream, _single(to_stream))
        if not maps and window is None:
            return None
        return cls(source, maps, window, tail)

    # ------------------------------------------------------------------ the train
    def push(self, bodies: list, bound) -> None:
        """Rows (body tuples in rowtime order) leaving the stream, then its bound (or None):
        what ``source.feed_train(bodies, bound)`` does, operator after operator.

        One row (a producer's ``insert``) takes the shortest way, every step inline: the
        operators' functions on the row, the window's buffer, the bound, the window's closing
        and the way to the sink. A train goes through :meth:`_push_train`.
        """
        ones = self.one_by_one
        if ones is None or len(bodies) != 1:
            self._push_train(bodies, bound)
            return
        row = bodies[0]
        t = row[self.at]
        if bound is None or bound < t:
            bound = t
        guard = self.entry
        if t < guard[0] or t < guard[1]:
            self.first.refuse(0, t, t, False)
        guard[1] = t
        window = self.window
        only = self.only_filter
        if only is not None:  # one RESTRICT before the window: the usual query
            passes = only(row)
            if passes:
                self.window_guard[1] = t
        else:
            passes = True
            for kind, fn, receiver in ones:
                if kind is _FILTER:
                    if not fn(row):
                        passes = False
                        break
                else:
                    row = fn(row) if kind is _MAP else fn(t, row)
                    if row is None:
                        passes = False
                        break
                if receiver is not None:
                    receiver[1] = t
        if passes:
            if window is None:
                self.last.emit_rows([(t, row)])
            else:
                buffer = window.buffer
                if buffer and buffer[-1][0] == t:
                    buffer[-1][1].append(row)
                else:
                    buffer.append([t, [row]])
        self._bound(bound)

    def _push_train(self, bodies: list, bound) -> None:
        """:meth:`push` of a train, stage after stage."""
        stages = self.stages
        if stages is None:
            stages = self.stages = self._compile()
            if len(bodies) == 1 and self.one_by_one is not None:
                self.push(bodies, bound)
                return
        rows = None
        if bodies:
            at = self.source.at
            rows = [(body[at], body) for body in bodies]
            first_t, last_t = rows[0][0], rows[-1][0]
            if bound is None or bound < last_t:
                bound = last_t
            guard = self.entry
            if first_t < guard[0] or first_t < guard[1] or last_t < first_t:
                self.first.refuse(0, first_t, last_t, False)
            guard[1] = last_t
            for stage, receiver in stages:
                rows = stage(rows)
                if not rows:
                    break
                if receiver is not None:
                    receiver[1] = rows[-1][0]
        window = self.window
        if rows:
            if window is None:
                self.last.emit_rows(rows)
            else:
                _buffer(window.buffer, rows)
        if bound is not None:
            self._bound(bound)

    def _bound(self, bound) -> None:
        """The bound reaches every fused operator's input, then the window (which closes the
        instants before it) or the general protocol after the last fused operator."""
        for guard in self.bounded:
            if bound > guard[0]:
                guard[0] = bound
        window = self.window
        if window is None:
            self.last.emit_bound(bound)
            return
        if window.bound is not None and bound <= window.bound:
            return
        closing = self.closing
        out = window.close(bound) if closing is None else window._close_sum(bound, closing)
        if self.sink is None:
            if out:
                window.emit_changes(out)
            window.emit_bound(bound)
        else:
            self._to_sink(out, bound)

    def _to_sink(self, out: list, bound) -> None:
        """ISTREAM/DSTREAM/CHANGES of the window's changes into the sink, then the bound."""
        sink = self.sink
        guard, sink_guard = self.bounded_after
        if out:
            first_t, last_t = out[0][0], out[-1][0]
            if first_t < guard[0] or first_t <= guard[1] or last_t < first_t:
                self.to_stream.refuse(0, first_t, last_t, True)
            guard[1] = last_t
            rows = self.to_stream.rows_of(out)
            if rows:
                sink_guard[1] = rows[-1][0]
                if sink.keep or sink.subscribers:  # else Sink.on_rows drops them
                    sink.on_rows(rows, 0)
        if bound > guard[0]:
            guard[0] = bound
        if bound > sink_guard[0]:
            sink_guard[0] = bound
        sink.bound = bound

    # ------------------------------------------------------------------ compiling
    def _compile(self) -> list:
        """``(stage, guard)`` per stream operator: ``stage(rows)`` is its output for a
        train; ``guard`` the port of the operator receiving it (None when the general
        protocol passes it on). Also ``one_by_one``: ``(kind, fn, guard)`` per operator for
        a single row (see :func:`_one`), or None when an operator may give several rows for
        one (a JOIN)."""
        guards = [op.ports[0] for op in self.maps[1:]]
        guards.append(None if self.window is None else self.window.ports[0])
        ones = [_one(op) for op in self.maps]
        self.one_by_one = None if None in ones else [
            (kind, fn, guard) for (kind, fn), guard in zip(ones, guards)]
        if isinstance(self.window, WindowSummarize) and self.window.functions()[7]:
            self.closing = self.window.functions()
        if self.window is not None and self.one_by_one is not None and \
                [kind for kind, _, _ in self.one_by_one] == [_FILTER]:
            self.only_filter = self.one_by_one[0][1]
        return [(_stage(op), guard) for op, guard in zip(self.maps, guards)]


_FILTER, _MAP, _TIMED = "filter", "map", "timed"


def _one(op):
    """``(kind, fn)`` for one row of the operator: ``_FILTER``, ``fn(row)`` says whether it
    passes; ``_MAP``, ``fn(row)`` is its output; ``_TIMED``, ``fn(t, row)`` is its output or
    None. None for an operator that may give several rows for one (a JOIN)."""
    if isinstance(op, StreamJoin):
        if op.kind == "join":
            return None
        _, key_of = op.functions()
        wanted = op.kind == "semijoin"
        return _FILTER, lambda row: (key_of(row) in op.right.index) == wanted
    fn, cond = op.functions()
    if isinstance(op.node, Restrict):
        return _FILTER, cond
    if isinstance(op.node, Project):
        return _TIMED, lambda t, row: _project_one(op, fn, t, row)
    return _MAP, fn


def _project_one(op, fn, t, row):
    """PROJECT of a stream for one row: None when an equal row was out at this instant."""
    value = fn(row)
    if t != op.instant:
        op.instant, op.seen = t, set()
    if value in op.seen:
        return None
    op.seen.add(value)
    return value


def _stage(op):
    """A function from a train of ``(t, row)`` to the operator's output train."""
    if isinstance(op, StreamJoin):
        return _join_stage(op)
    fn, cond = op.functions()
    if isinstance(op.node, Restrict):
        return lambda rows: [item for item in rows if cond(item[1])]
    if isinstance(op.node, Project):
        return lambda rows: _project(op, fn, rows)
    return lambda rows: [(t, fn(row)) for t, row in rows]


def _project(op, fn, rows) -> list:
    """PROJECT of a stream: equal rows at one instant are one row (``RowMap.on_rows``)."""
    out = []
    for t, row in rows:
        value = fn(row)
        if t != op.instant:
            op.instant, op.seen = t, set()
        if value in op.seen:
            continue
        op.seen.add(value)
        out.append((t, value))
    return out


def _join_stage(op):
    combine, key_of = op.functions()
    if op.kind == "join":
        def join(rows):
            index = op.right.index
            return [(t, combine(row, match)) for t, row in rows
                    for match in index.get(key_of(row), ())]
        return join
    wanted = op.kind == "semijoin"

    def semi(rows):
        index = op.right.index
        return [(t, row) for t, row in rows if (key_of(row) in index) == wanted]
    return semi
