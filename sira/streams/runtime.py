"""Continuous queries: sira expressions over windows of live streams, evaluated incrementally.

A registered expression is compiled into a small dataflow of operators. Rows and bounds are
pushed through it operator by operator; a result leaves the query only once it is final, i.e.
once the bounds prove that no later input can change it. So, as SQLstream puts it, bounds never
change results, they only let them out sooner: the concatenation of everything a query emits
equals the batch evaluation of the same expression on the whole input, and nothing emitted is
ever retracted.

Two kinds of data flow between operators:

* a **stream** (rows with a rowtime), from named streams, through RESTRICT/EXTEND/PROJECT/
  RENAME, UNION (a merge by rowtime that waits for bounds on every input) and JOIN, SEMIJOIN
  or SEMIMINUS with a constant relation;
* a **temporal relation** (a CQL window's output, whose tuples hold during an interval), as a
  flow of changes ``(t, tuple, +1/-1)`` netted per instant, through RESTRICT/EXTEND/PROJECT/RENAME
  (counting per value, as PACK does), UNION/INTERSECT/MINUS/XMINUS and JOIN/SEMIJOIN/SEMIMINUS
  pointwise with other temporal relations (JOIN and the semijoins also with a constant
  relation), and a pointwise SUMMARIZEBY over ``during``;
  ISTREAM, DSTREAM and CHANGES turn it back into a stream, and a temporal relation at the top
  of a query is emitted as tuples with their ``during`` once each interval has closed.

The operators live in :mod:`sira.streams.operators` (streams) and :mod:`sira.streams.temporal`
(temporal relations); this module compiles a query into them and runs it.

Parts of a query that read no stream are constant relations (relvars given to ``register``),
evaluated once by the batch engine. Rows travel in trains: each operator takes a list of rows
or of instants' changes at a time, so a producer's ``insert_many`` costs one pass.

Every operator keeps only what can still matter: a window keeps the elements still in it (their
expiry in a sorted list), an aggregation the current tuples of each group. ``LiveQuery.save``
checkpoints the whole dataflow to a file (write, fsync, rename); ``LiveQuery.load`` restores it.

    >>> import sira
    >>> from sira.streams import StreamEngine
    >>> engine = StreamEngine()
    >>> s = engine.create_stream("s", {"v": sira.INT})
    >>> q = engine.register("istream(project(window(s, ts, range(10)), (v, during)), at)")
    >>> p = s.attach()
    >>> p.insert({"v": 1}, 5); p.insert({"v": 2}, 8)
    >>> q.results()            # 5 is final only when the bound passes it
    [{'at': 5, 'v': 1}]
    >>> p.bound(100); sorted(r["at"] for r in q.results())
    [5, 8]
"""

from __future__ import annotations

import os
import pickle
import tempfile

from ..algebra.aggregation import SummarizeBy
from ..algebra.basic import Extend, Project, RelvarRef, Rename, Restrict
from ..algebra.joins import Join, SemiJoin, SemiMinus
from ..algebra.packing import interval_names
from ..algebra.setops import Intersect, Minus, Union, XMinus
from ..algebra.windows import Changes, DStream, IStream, Window
from ..values import Relation, normalize_name
from .named import LOG, NamedStream
from .operators import (INFINITY, Merge, NotSupportedLive, RowMap, Sink, Source, StreamJoin,
                        ToStream)
from .temporal import TemporalJoin, TemporalSetOp, TemporalSummarize, WindowOp, WindowSummarize


# ---------------------------------------------------------------------------------- compiling

class LiveQuery:
    """A registered continuous query: its dataflow, its results so far, checkpoints.

    A query that fails while running (an INT sum overflowing, a division by zero in an EXTEND)
    stops: ``error`` holds the exception, its results so far stay, and it takes no more input.
    The streams and the other queries go on; the row that caused it stays inserted.
    """

    def __init__(self, node, sources: dict, sink: Sink):
        self.node = node
        self.sources = sources  # stream name -> [Source, ...]
        self.sink = sink
        self.error: Exception | None = None

    @property
    def heading(self):
        return self.node.heading

    def results(self) -> list:
        """Every final result so far, as dicts, in the order they became final."""
        names = self.sink.heading.names
        return [dict(zip(names, r)) for r in self.sink.results]

    def relation(self):
        """The results so far as a relation (equal to the batch result once input is complete)."""
        from ..values import Relation
        return Relation(self.sink.heading, frozenset(self.sink.results))

    def subscribe(self, callback) -> None:
        """``callback(row_dict, bound)`` for each result as it becomes final."""
        self.sink.subscribers.append(callback)

    def feed(self, stream_name: str, row, bound) -> None:
        """Push one row of a stream (a dict, as stream subscribers get it) and/or a bound."""
        for source in self.sources.get(stream_name, ()):
            self._run(source.feed, row, bound)

    def feed_train(self, stream_name: str, bodies: list, bound) -> None:
        """Push a train of rows (body tuples in the stream's heading order) and a bound."""
        for source in self.sources.get(stream_name, ()):
            self._run(source.feed_train, bodies, bound)

    def finish(self) -> None:
        """Declare the input complete: every pending result becomes final."""
        for sources in self.sources.values():
            for source in sources:
                self._run(source.emit_bound, INFINITY)
        if self.error is None:
            self.sink.finish()

    def _run(self, step, *args):
        """One push through the dataflow; a failure stops the query and is raised once."""
        if self.error is not None:
            return
        try:
            step(*args)
        except Exception as err:
            self.error = err
            raise

    def save(self, path) -> None:
        """Checkpoint the query's state to ``path`` atomically (write, fsync, rename)."""
        directory = os.path.dirname(os.path.abspath(path))
        subscribers = self.sink.subscribers
        self.sink.subscribers = []
        fd, tmp = tempfile.mkstemp(prefix=".sira-checkpoint-", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(self, f, protocol=pickle.HIGHEST_PROTOCOL)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        finally:
            self.sink.subscribers = subscribers

    @staticmethod
    def load(path) -> "LiveQuery":
        """A query restored from a checkpoint (subscribe again; feed it the rest)."""
        with open(path, "rb") as f:
            return pickle.load(f)


STREAM, TEMPORAL, STATIC = "stream", "temporal", "static"


def compile_query(node, streams: dict, relations: dict | None = None,
                  keep: bool = True) -> LiveQuery:
    """The dataflow of ``node`` over named ``streams`` (and constant ``relations``, by name);
    NotSupportedLive for what cannot run. ``keep``: the sink keeps every result."""
    sources: dict = {}
    relations = relations or {}

    def build(n):
        """(operator producing n's output, or a Relation for a constant part; its kind)"""
        if not _names_used(n) & set(streams):
            return _constant(n, relations), STATIC
        if isinstance(n, RelvarRef):
            stream = streams[n.name]
            op = Source(n, stream)
            sources.setdefault(stream.name, []).append(op)
            return op, STREAM
        if isinstance(n, (Restrict, Extend, Project, Rename)):
            src, kind = build(n.source)
            during = None
            if kind == TEMPORAL:
                during = _during_of(n.source)
                if isinstance(n, Restrict) and during in _attrs_of(n.condition):
                    raise NotSupportedLive(node="a RESTRICT condition on a window's during")
                if isinstance(n, Extend) and any(during in _attrs_of(e) for _, e in n.specs):
                    raise NotSupportedLive(node="an EXTEND formula reading a window's during")
                if isinstance(n, Project) and during not in n.names:
                    raise NotSupportedLive(node="a PROJECT dropping a window's during")
                if isinstance(n, Rename) and during in dict(n.pairs):
                    raise NotSupportedLive(node="a RENAME of a window's during")
            op = RowMap(n, _without(n.heading, during), _without(n.source.heading, during),
                        kind == TEMPORAL)
            src.connect(op)
            return op, kind
        if isinstance(n, (Union, Intersect, Minus, XMinus)):
            return build_setop(n)
        if isinstance(n, (Join, SemiJoin, SemiMinus)):
            return build_join(n)
        if isinstance(n, Window):
            src, kind = build(n.source)
            if kind != STREAM:
                raise NotSupportedLive(node="a window over a temporal relation")
            op = WindowOp(n, n.source.heading, n.source.heading)
            src.connect(op)
            return op, TEMPORAL
        if isinstance(n, SummarizeBy):
            window = n.source if isinstance(n.source, Window) else None
            src, kind = build(window.source if window is not None else n.source)
            if window is not None:
                if kind != STREAM:
                    raise NotSupportedLive(node="a window over a temporal relation")
                kind = TEMPORAL
            during = _during_of(n.source) if kind == TEMPORAL else None
            if kind != TEMPORAL or n.using != (during,) or during not in n.by or any(
                    during in _attrs_of(e) for _, _, e in n.specs):
                raise NotSupportedLive(node="a SUMMARIZEBY other than summarizebyusing(W, "
                                       "(..., during), specs, (during)) over a window")
            heading, src_heading = _without(n.heading, during), _without(n.source.heading, during)
            if window is not None and WindowSummarize.fits(n, window):
                op = WindowSummarize(n, heading, src_heading, window)
            else:
                op = TemporalSummarize(n, heading, src_heading)
                if window is not None:  # the window on its own, then the summary
                    win = WindowOp(window, window.source.heading, window.source.heading)
                    src.connect(win)
                    src = win
            src.connect(op)
            return op, TEMPORAL
        if isinstance(n, (IStream, DStream, Changes)):
            src, kind = build(n.source)
            if kind != TEMPORAL or n.during != _during_of(n.source):
                raise NotSupportedLive(node=f"{n.operator_name} of something not a window")
            op = ToStream(n, n.heading, _without(n.source.heading, n.during))
            src.connect(op)
            return op, STREAM
        raise NotSupportedLive(node=n.operator_name)

    def build_setop(n):
        """UNION of streams (a merge by rowtime); UNION, INTERSECT, MINUS, XMINUS of temporal
        relations, pointwise on their windows' during."""
        name = n.operator_name
        built = [build(s) for s in n.children]
        kinds = {kind for _, kind in built}
        if kinds == {STREAM} and isinstance(n, Union):
            op = Merge(n, n.heading, len(built))
        elif kinds == {TEMPORAL}:
            during = _during_of(n)
            if tuple(n.pointwise) != (during,) or any(_during_of(c) != during
                                                       for c in n.children):
                raise NotSupportedLive(node=f"a {name} other than pointwise on the windows' "
                                       f"'{during}'")
            kind = {Union: "union", Intersect: "intersect", Minus: "minus",
                    XMinus: "xminus"}[type(n)]
            op = TemporalSetOp(n, _without(n.heading, during), len(built), kind)
        else:
            raise NotSupportedLive(node=f"a {name} of {' and '.join(sorted(kinds))} inputs "
                                   f"(UNION merges streams; the others need windows)")
        for port, (child, _) in enumerate(built):
            child.connect(op, port)
        return op, kinds.pop()

    def build_join(n):
        """JOIN (of two operands), SEMIJOIN, SEMIMINUS: pointwise between temporal relations,
        or a stream / temporal relation with a constant relation."""
        operands = n.children
        if len(operands) != 2:
            raise NotSupportedLive(node=f"a {n.operator_name} of {len(operands)} operands "
                                   f"(nest them two by two)")
        kind_name = {Join: "join", SemiJoin: "semijoin", SemiMinus: "semiminus"}[type(n)]
        (left, lk), (right, rk) = [build(c) for c in operands]
        if lk == STATIC and kind_name == "join":  # a join commutes: keep the constant right
            (left, lk), (right, rk) = (right, rk), (left, lk)
            operands = operands[::-1]
        lh, rh = operands[0].heading, operands[1].heading
        if lk == STATIC:
            raise NotSupportedLive(node=f"a {n.operator_name} of a constant relation with a "
                                   f"stream or window")
        if rk == STATIC and interval_names(rh):
            raise NotSupportedLive(node=f"a {n.operator_name} with a constant relation that "
                                   f"has interval attributes")
        if lk == STREAM:
            if rk != STATIC:
                raise NotSupportedLive(node=f"a {n.operator_name} of a stream with a stream or "
                                       f"temporal relation (window the stream first)")
            op = StreamJoin(n, n.heading, lh, right, kind_name)
            left.connect(op)
            return op, STREAM
        during = _during_of(operands[0])
        if rk == STREAM or (rk == TEMPORAL and _during_of(operands[1]) != during) or \
                tuple(n.pointwise) != (during,):
            raise NotSupportedLive(node=f"a {n.operator_name} other than pointwise on the "
                                   f"windows' '{during}'")
        out = _without(n.heading, during)
        l_vals, r_vals = _without(lh, during), _without(rh, during)
        if rk == STATIC:
            op = TemporalJoin(n, out, l_vals, r_vals, kind_name, static=right)
            left.connect(op, 0)
        else:
            op = TemporalJoin(n, out, l_vals, r_vals, kind_name)
            left.connect(op, 0)
            right.connect(op, 1)
        return op, TEMPORAL

    top, kind = build(node)
    if kind == STATIC:
        raise NotSupportedLive(node="a query that reads no stream")
    during = _during_of(node) if kind == TEMPORAL else None
    sink = Sink(node, node.heading, kind == TEMPORAL, during, keep)
    top.connect(sink)
    return LiveQuery(node, sources, sink)


def _names_used(node) -> set:
    """The relvar names a tree reads."""
    if isinstance(node, RelvarRef):
        return {node.name}
    names = set()
    for child in node.children:
        names |= _names_used(child)
    return names


def _constant(node, relations):
    """A part of a query that reads no stream, evaluated once by the batch engine."""
    missing = sorted(_names_used(node) - set(relations))
    if missing:
        raise NotSupportedLive(node=f"relvar '{missing[0]}' (neither a live stream nor a "
                               f"relation given to register)")
    from ..engine import evaluate_node
    return evaluate_node(node, relations)


def _during_of(node) -> str | None:
    """The interval attribute of the window a temporal part of a query comes from (the first
    window found below it that is not turned back into a stream)."""
    if isinstance(node, Window):
        return node.during
    if isinstance(node, (IStream, DStream, Changes)):
        return None
    for child in node.children:
        during = _during_of(child)
        if during is not None:
            return during
    return None


def _without(heading, name):
    return heading if name is None or name not in heading else heading.without([name])


def _attrs_of(expr) -> set:
    from ..expressions.nodes import attributes_used
    return attributes_used(expr)


class StreamEngine:
    """Named streams and the continuous queries registered on them."""

    def __init__(self):
        self.streams: dict = {}
        self.queries: list = []

    def create_stream(self, name: str, payload, rowtime: str = "ts",
                      arrival: str = "seq") -> NamedStream:
        stream = NamedStream(name, payload, rowtime, arrival)
        self.streams[stream.name] = stream
        stream.listen(lambda bodies, bound, s=stream.name: self._feed(s, bodies, bound))
        return stream

    def register(self, expr, relvars: dict | None = None, keep: bool = True) -> LiveQuery:
        """Register a continuous query (text or tree) over the named streams.

        Args:
            relvars: constant relations the query may read besides the streams (name ->
                Relation), or headings for parsing.
            keep: keep every result for ``results()``/``relation()``; a query meant to run
                for ever passes False and reads its results through ``subscribe``, so its
                memory stays bounded by its operators' state.
        """
        import sira
        catalog = {name: s.heading for name, s in self.streams.items()}
        catalog.update({k: v for k, v in (relvars or {}).items()})
        node = sira.parse(expr, catalog) if isinstance(expr, str) else expr
        relations = {normalize_name(k): v for k, v in (relvars or {}).items()
                     if isinstance(v, Relation)}
        query = compile_query(node, self.streams, relations, keep)
        self.queries.append(query)
        for name, stream in self.streams.items():
            if name in query.sources and stream.bound is not None:
                query.feed(name, None, stream.bound)
        return query

    def adopt(self, query: LiveQuery) -> LiveQuery:
        """Attach a restored query to this engine's streams."""
        self.queries.append(query)
        return query

    def _feed(self, stream_name, bodies, bound):
        for query in self.queries:
            try:
                query.feed_train(stream_name, bodies, bound)
            except Exception:  # the query has stopped (query.error); the others go on
                LOG.exception(
                    "continuous query %s failed and stopped", query.node)

    def finish(self):
        """End of input on every stream: each query's pending results become final."""
        for query in self.queries:
            try:
                query.finish()
            except Exception:
                LOG.exception(
                    "continuous query %s failed and stopped", query.node)


__all__ = ["StreamEngine", "LiveQuery", "NotSupportedLive", "compile_query"]
