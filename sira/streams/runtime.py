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
(temporal relations); this module compiles a query into them and runs it. Where the operators
from a stream allow (stream operators into a window or a running summary, out through
ISTREAM/DSTREAM/CHANGES), they run fused, one loop per train on their own state
(:mod:`sira.streams.fused`): the results, checks and checkpoints are the same, only faster.

Parts of a query that read no stream are constant relations (relvars given to ``register``),
evaluated once by the batch engine. Rows travel in trains: each operator takes a list of rows
or of instants' changes at a time, so a producer's ``insert_many`` costs one pass.

Every operator keeps only what can still matter: a window keeps the elements still in it (their
expiry in a sorted list), an aggregation the current tuples of each group. Each operator checks
what reaches it against the bounds it was given, so an item out of order is an
:class:`~sira.streams.operators.InternalStreamError` naming the operator, never a wrong result.

``LiveQuery.save`` checkpoints the query with the streams it reads (bounds, clocks, producers
and their positions) to a data-only file (:mod:`sira.streams.checkpoint`); ``LiveQuery.load``
restores them in a new engine. A query validates whatever is fed to it as a producer's insert
is validated, and recognises rows it has consumed before by their arrival numbers, so a source
replaying from ``position()`` after a restore gets exactly-once results.

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

import functools
import threading

import attrs

from ..algebra.aggregation import SummarizeBy
from ..algebra.basic import Extend, Project, RelvarRef, Rename, Restrict
from ..algebra.joins import Join, SemiJoin, SemiMinus
from ..algebra.nesting import Ungroup
from ..algebra.packing import interval_names
from ..algebra.setops import Intersect, Minus, Union, XMinus
from ..algebra.spl import SplWindow
from ..algebra.windowby import WindowBy
from ..algebra.windows import Changes, DStream, IStream, Window, WindowTable
from ..errors import SiraError, UnknownRelvar, closest_names
from ..syntax.builder import build_text
from ..values import Heading, Relation, check_row, normalize_name
from .named import LOG, LateRowError, NamedStream, StreamError
from .operators import (INFINITY, Merge, NotSupportedLive, RowMap, Sink, Source, StreamJoin,
                        StreamUngroup, ToStream)
from .temporal import TemporalJoin, TemporalSetOp, TemporalSummarize, WindowOp, WindowSummarize
from . import spl, windowby, windowtables
from .fused import FusedChain, pushes


# ---------------------------------------------------------------------------------- queries

class QueryFailed(SiraError):
    """Input offered to a continuous query that has failed (``query.error`` says why): a failed
    query takes no more input, also after a restore, and says so instead of dropping it."""

    fields = ("query", "error")

    def default_message(self):
        return (f"the continuous query {self.query} has failed and takes no more input "
                f"({self.error})")


@attrs.frozen
class StreamPosition:
    """A query's position on one stream: ``seq`` rows consumed (the arrival number of the last
    one), the ``bound`` it was given, and each producer's :class:`ProducerPosition` by name."""

    seq: int
    bound: object
    producers: dict


@attrs.define
class _Input:
    """What a query has consumed from one stream: the last arrival number and the bound."""

    seq: int = 0
    bound: object = None


class LiveQuery:
    """A registered continuous query: its dataflow, its results so far, checkpoints.

    A query that fails while running (an INT sum overflowing, a division by zero in an EXTEND)
    stops: ``error`` holds the exception, its results so far stay, and it takes no more input
    (offering it some raises :class:`QueryFailed`, also after a restore). The streams and the
    other queries go on; the row that caused it stays inserted.

    A subscriber that raises is detached: it is called no more, its exception is kept in
    ``subscriber_errors`` (with the callback) and logged; the results and the other subscribers
    are unaffected.

    With ``fuse`` (the default) the operators from each stream run as one loop per train
    where they allow (:mod:`sira.streams.fused`; ``fused`` says whether any do): same
    results, same checks, same checkpoints.
    """

    def __init__(self, node, sources: dict, sink: Sink, streams: dict | None = None,
                 relations: dict | None = None, fuse: bool = True):
        self.node = node
        self.sources = sources  # stream name -> [Source, ...]
        self.pushes = pushes(sources, fuse)  # stream name -> [feed a train into the dataflow]
        self.sink = sink
        self.streams = dict(streams or {})  # stream name -> NamedStream, those the query reads
        self.relations = dict(relations or {})  # constant relvars the query reads, by name
        self.inputs = {name: _Input(seq=s.seq) for name, s in self.streams.items()}
        self.error: Exception | None = None
        self.engine = None  # the StreamEngine feeding it, once registered
        self.lock = threading.RLock()  # the engine's, once registered

    @property
    def heading(self):
        return self.node.heading

    @property
    def fused(self) -> bool:
        """Whether some of this query's operators run fused (see :mod:`sira.streams.fused`)."""
        return any(isinstance(getattr(push, "__self__", None), FusedChain)
                   for pushes_of_a_stream in self.pushes.values() for push in pushes_of_a_stream)

    @property
    def keep(self) -> bool:
        return self.sink.keep

    @property
    def subscriber_errors(self) -> list:
        """``(callback, exception)`` for each subscriber that raised and was detached."""
        return self.sink.subscriber_errors

    def results(self) -> list:
        """Every final result so far, as dicts, in the order they became final."""
        with self.lock:
            names = self.sink.heading.names
            return [dict(zip(names, r)) for r in self.sink.results]

    def relation(self):
        """The results so far as a relation (equal to the batch result once input is complete)."""
        with self.lock:
            return Relation(self.sink.heading, frozenset(self.sink.results))

    def subscribe(self, callback) -> None:
        """``callback(row_dict, bound)`` for each result as it becomes final; one that raises is
        detached and its error kept in ``subscriber_errors``."""
        with self.lock:
            self.sink.subscribers.append(callback)

    def position(self) -> dict:
        """Where the query stands on each stream it reads: a :class:`StreamPosition` by stream
        name, with the rows it has consumed and each producer's position. A source replays
        from there: rows numbered after a producer's ``seq`` (or all, with their numbers: those
        already accepted are skipped), bounds above its ``bound``.

            >>> import sira
            >>> engine = StreamEngine()
            >>> s = engine.create_stream("s", {"v": sira.INT})
            >>> q = engine.register("restrict(s, gt(v, 0))")
            >>> s.attach("P").insert({"v": 1}, 5)
            >>> pos = q.position()["s"]
            >>> pos.seq, pos.bound
            (1, 5)
            >>> pos.producers["P"]
            ProducerPosition(seq=1, rowtime=5, bound=5, attached=True)
        """
        with self.lock:
            return {name: StreamPosition(self.inputs[name].seq, self.inputs[name].bound,
                                         stream.position())
                    for name, stream in self.streams.items()}

    def producer(self, stream_name: str, producer_name: str):
        """The handle of an attached producer of a stream this query reads (after a restore, to
        go on inserting)."""
        return self._stream(stream_name).producer(producer_name)

    def feed(self, stream_name: str, row, bound) -> None:
        """Push one row of a stream and/or a bound, as the stream would: ``row`` is a dict by
        attribute name with the rowtime and arrival number (as stream subscribers get it), or
        None.

        The row is checked exactly as a producer's insert is: its heading and types, its
        lateness (not before the bound this query was given on that stream) and its arrival
        number. The replay rule: a row numbered at or below the query's position on the stream
        was consumed before and is skipped; a number beyond the next is refused. A bound at or
        below the one already given is stale and ignored.

        Raises:
            UnknownRelvar: the query reads no stream of that name.
            SiraTypeError / UnknownAttribute: the row or the bound does not fit the stream.
            LateRowError: the row's rowtime is before the query's bound on that stream.
            StreamError: the row's number leaves rows out.
            QueryFailed: the query has failed before.
        """
        with self.lock:
            stream = self._stream(stream_name)
            bodies = [] if row is None else [self._checked_body(stream, row)]
            self._take(stream, bodies, self._checked_bound(stream, bound), checked=True)

    def feed_train(self, stream_name: str, bodies: list, bound) -> None:
        """Push a train of rows (body tuples in the stream's heading order, arrival numbers
        consecutive) and a bound; checked as :meth:`feed` checks one row."""
        with self.lock:
            stream = self._stream(stream_name)
            bodies = [self._checked_body(stream, body) for body in bodies]
            self._take(stream, bodies, self._checked_bound(stream, bound), checked=True)

    def _stream(self, name):
        stream = self.streams.get(normalize_name(name)) if isinstance(name, str) else None
        if stream is None:
            known = sorted(self.streams)
            raise UnknownRelvar(relvar=name, available=tuple(known),
                                suggestions=closest_names(str(name), known))
        return stream

    @staticmethod
    def _checked_body(stream, row) -> tuple:
        return check_row(stream.heading, row, operator=f"STREAM {stream.name}")

    @staticmethod
    def _checked_bound(stream, bound):
        return None if bound is None else stream._checked_time(bound, "a bound")

    def _consume(self, stream, bodies: list, bound) -> None:
        """Rows and a bound straight from a stream this query is registered on (already checked
        by the stream; only the position is checked here)."""
        self._take(stream, bodies, bound, checked=False)

    def _take(self, stream, bodies, bound, checked):
        """Apply the replay rule and the lateness check, then push through the dataflow."""
        if self.error is not None:
            self._require_running()
        where = self.inputs[stream.name]
        floor = where.bound
        if bodies:
            seq_at, at = stream.arrival_index, stream.rowtime_index
            first = bodies[0]
            if checked or first[seq_at] != where.seq + 1 or (
                    floor is not None and first[at] < floor):
                try:
                    bodies = _continuing(stream, bodies, where, checked)
                except SiraError as err:
                    if not checked:  # the stream has the row; this query cannot take it
                        self.error = err
                    raise
            if bodies:
                last = bodies[-1]
                where.seq = last[seq_at]
                if floor is None or last[at] > floor:
                    where.bound = floor = last[at]
        if bound is not None and (floor is None or bound > floor):
            where.bound = bound
        else:
            bound = None
        if bodies or bound is not None:
            try:  # as _run does for each, without a call per source
                for push in self.pushes.get(stream.name, ()):
                    push(bodies, bound)
            except Exception as err:
                self.error = err
                raise

    def finish(self) -> None:
        """Declare the input complete: every pending result becomes final, and the query takes
        no more input. Its streams go on for the other queries; their later rows and bounds
        are not this query's input and pass it by (:meth:`feed` refuses a later row as late).
        Finishing again changes nothing.

        Raises:
            QueryFailed: the query has failed before.
        """
        with self.lock:
            self._require_running()
            for name, sources in self.sources.items():
                self.inputs[name].bound = INFINITY
                for source in sources:
                    self._run(source.emit_bound, INFINITY)
            self.sink.finish()

    def _require_running(self):
        if self.error is not None:
            raise QueryFailed(query=repr(self.node), error=failure_text(self.error))

    def _run(self, step, *args):
        """One push through the dataflow; a failure stops the query and is raised once."""
        if self.error is not None:
            self._require_running()
        try:
            step(*args)
        except Exception as err:
            self.error = err
            raise

    def save(self, path) -> None:
        """Checkpoint the query, the streams it reads (their bounds, clocks, producers and
        positions) and the constant relations it reads to ``path``, atomically.

        The file is data only (a versioned, checksummed JSON document; see
        :mod:`sira.streams.checkpoint`): loading it never runs code. Subscribers are not saved.
        """
        from .checkpoint import save_checkpoint
        with self.lock:
            save_checkpoint(path, list(self.streams.values()), [self])

    @staticmethod
    def load(path, fuse: bool = True) -> "LiveQuery":
        """The query restored from a checkpoint, with its streams and producers in a new
        :class:`StreamEngine` (``query.engine``): subscribe again, and go on inserting through
        ``query.producer(stream, name)`` (or feed it), replaying from ``query.position()``.
        ``fuse``: as for :class:`StreamEngine` (a checkpoint does not depend on it).

        Raises:
            CheckpointError: the file is missing, truncated, corrupted, tampered with, of another
                format version, not a checkpoint, or holds several queries (use
                :meth:`StreamEngine.load`).
        """
        from .checkpoint import load_checkpoint
        engine = load_checkpoint(path, fuse)
        if len(engine.queries) != 1:
            from ..errors import CheckpointError
            raise CheckpointError(path=str(path), reason=f"it holds {len(engine.queries)} "
                                  f"queries; load it with StreamEngine.load")
        return engine.queries[0]


def parse_query(text: str, catalog: dict):
    """The tree of a live query's text, against the headings of the streams and relations it
    may name (``catalog``: name -> Relation or heading); the Relations are its constants.

        >>> from sira import INT
        >>> parse_query("restrict(s, gt(v, 1))", {"s": {"v": INT}})
        restrict(s,gt(v,1))
    """
    headings = {name: value.heading if isinstance(value, Relation) else Heading.of(value)
                for name, value in catalog.items()}
    constants = {name: value for name, value in catalog.items() if isinstance(value, Relation)}
    return build_text(text, headings, constants)


def failure_text(error) -> str:
    """What made a query fail, as ``ErrorClass: message`` (kept as it is across restores)."""
    if isinstance(error, QueryFailed):
        return error.error
    return f"{type(error).__name__}: {error}"


def _continuing(stream, bodies, where, checked) -> list:
    """The rows after the query's position ``where`` on ``stream`` (the others were consumed
    before: the replay rule), checked to continue it: every row when ``checked`` (fed from
    outside), else the first (a stream numbers its rows itself)."""
    seq_at = stream.arrival_index
    if bodies[0][seq_at] <= where.seq:
        bodies = _after(bodies, where.seq, seq_at)
    _check_continues(stream, bodies if checked else bodies[:1], where)
    return bodies


def _after(bodies, seq, seq_at) -> list:
    """The rows numbered after ``seq`` (the others were consumed before: the replay rule)."""
    return [body for body in bodies if body[seq_at] > seq]


def _check_continues(stream, bodies, where) -> None:
    """Rows must continue the query's numbering on ``stream`` and not come before the bound it
    was given (StreamError or LateRowError otherwise)."""
    seq_at, at = stream.arrival_index, stream.rowtime_index
    expected, floor = where.seq + 1, where.bound
    for body in bodies:
        if body[seq_at] != expected:
            raise StreamError(f"stream '{stream.name}': row {body[seq_at]} after row "
                              f"{expected - 1} leaves rows out", stream=stream.name,
                              producer=None)
        if floor is not None and body[at] < floor:
            raise LateRowError(stream=stream.name,
                               row=dict(zip(stream.heading.names, body)), bound=floor)
        expected, floor = expected + 1, body[at]


# ---------------------------------------------------------------------------------- compiling

STREAM, TEMPORAL, STATIC = "stream", "temporal", "static"


def compile_query(node, streams: dict, relations: dict | None = None,
                  keep: bool = True, fuse: bool = True) -> LiveQuery:
    """The dataflow of ``node`` over named ``streams`` (and constant ``relations``, by name);
    NotSupportedLive for what cannot run. ``keep``: the sink keeps every result; ``fuse``:
    run operators fused where they allow (:mod:`sira.streams.fused`)."""
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
            windows = kind == STREAM and isinstance(n, Project) and windowby.projects_windows(n)
            if kind == STREAM and isinstance(n, Project) and not windows and \
                    not windowby.project_keeps_windows(n):
                _require_rowtime(n.source, streams, n.names, "a PROJECT of a stream")
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
            op = (windowby.WindowProject if windows else RowMap)(
                n, _without(n.heading, during), _without(n.source.heading, during),
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
            _require_window_on_rowtime(n, streams)
            op = WindowOp(n, n.source.heading, n.source.heading)
            src.connect(op)
            return op, TEMPORAL
        if isinstance(n, WindowTable) or windowtables.summarizes_window_table(n):
            return windowtables.build_window_table(n, build, streams, _rowtime_of), STREAM
        if isinstance(n, Ungroup):
            src, kind = build(n.source)
            if kind != STREAM:
                raise NotSupportedLive(node="an UNGROUP of something not a stream")
            if _rowtime_of(n.source, streams) is None and \
                    windowby.window_key(n.source) is None:
                raise NotSupportedLive(node="an UNGROUP of a stream without a rowtime")
            op = StreamUngroup(n)
            src.connect(op)
            return op, STREAM
        if isinstance(n, SplWindow):
            return spl.build_spl(n, build, streams, _rowtime_of), STREAM
        if isinstance(n, WindowBy):
            return windowby.build_windowby(n, build, streams, _rowtime_of), STREAM
        if isinstance(n, SummarizeBy):
            window = n.source if isinstance(n.source, Window) else None
            src, kind = build(window.source if window is not None else n.source)
            if window is not None:
                if kind != STREAM:
                    raise NotSupportedLive(node="a window over a temporal relation")
                _require_window_on_rowtime(window, streams)
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
            if _rowtime_of(n, streams) is None:
                raise NotSupportedLive(node="a UNION of streams whose rowtimes are different "
                                       "attributes")
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
    read = _names_used(node)
    return LiveQuery(node, sources, sink,
                     {name: s for name, s in streams.items() if name in read},
                     {name: r for name, r in relations.items() if name in read}, fuse)


def _rowtime_of(node, streams) -> str | None:
    """The attribute holding the rowtime of a stream-valued part of a query (the rowtime its
    rows travel with), or None when no single attribute holds it."""
    if isinstance(node, RelvarRef):
        stream = streams.get(node.name)
        return stream.rowtime if stream is not None else None
    if isinstance(node, (IStream, DStream, Changes)):
        return node.at
    if isinstance(node, SplWindow):
        return "at"
    if isinstance(node, (WindowTable, SummarizeBy)):
        return windowtables.rowtime_of(node, streams, _rowtime_of)
    if isinstance(node, (Restrict, Extend, SemiJoin, SemiMinus, Ungroup)):
        return _rowtime_of(node.children[0], streams)
    if isinstance(node, Project):
        name = _rowtime_of(node.source, streams)
        return name if name in node.names else None
    if isinstance(node, Rename):
        name = _rowtime_of(node.source, streams)
        return dict(node.pairs).get(name, name)
    if isinstance(node, (Union, Join)):
        names = {_rowtime_of(c, streams) for c in node.children
                 if _names_used(c) & set(streams)}
        return names.pop() if len(names) == 1 else None
    return None


def _require_rowtime(source, streams, kept, what) -> None:
    """A PROJECT of a stream must keep its rowtime: without it equal rows of different instants
    would be one tuple of the result, which a stream cannot retract."""
    rowtime = _rowtime_of(source, streams)
    key = windowby.window_key(source)
    if rowtime is None and key is not None:
        raise NotSupportedLive(node=f"{what} of a WINDOWBY's windows that drops what tells them "
                               f"apart ({', '.join(key) or 'nothing'})")
    if rowtime is None and isinstance(source, WindowBy):
        raise NotSupportedLive(node=f"{what} of a WINDOWBY's windows (keep the partition "
                               f"attributes and declare and keep the start's AT variable)")
    if rowtime is None or rowtime not in kept:
        raise NotSupportedLive(node=f"{what} that drops its rowtime ('{rowtime}')")


def _require_window_on_rowtime(window, streams) -> None:
    """A live window orders its elements by the rowtime they travel with, so it must be on
    that attribute (a window on another one is evaluated by the batch engine only)."""
    rowtime = _rowtime_of(window.source, streams)
    if window.ts != rowtime:
        raise NotSupportedLive(node=f"a window on '{window.ts}', which is not the rowtime of "
                               f"its stream ('{rowtime}')")


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
    """Named streams and the continuous queries registered on them.

    One lock (``engine.lock``) serialises everything: producers of any of its streams may
    insert, bound and detach from several threads at once, and the queries and subscribers
    they drive run on one thread at a time.

    Args:
        fuse: queries registered here run their operators fused where they allow
            (:mod:`sira.streams.fused`); False runs every operator on its own (the same
            results, checks and checkpoints, slower).
    """

    def __init__(self, fuse: bool = True):
        self.streams: dict = {}
        self.queries: list = []
        self.lock = threading.RLock()
        self.fuse = fuse

    def create_stream(self, name: str, payload, rowtime: str = "ts",
                      arrival: str = "seq") -> NamedStream:
        """A new named stream (see :class:`NamedStream`), sharing this engine's lock."""
        with self.lock:
            stream = NamedStream(name, payload, rowtime, arrival, lock=self.lock)
            if stream.name in self.streams:  # (names are case-insensitive)
                raise StreamError(f"stream '{stream.name}' exists already in this engine; "
                                  f"give the new stream another name", stream=stream.name)
            self.streams[stream.name] = stream
            stream.listen(functools.partial(self._feed, stream))
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
        from ..engine.guards import check_relvar_names
        check_relvar_names(list(self.streams) + list(relvars or {}))  # never one name twice
        with self.lock:
            catalog = {name: s.heading for name, s in self.streams.items()}
            catalog.update({k: v for k, v in (relvars or {}).items()})
            node = parse_query(expr, catalog) if isinstance(expr, str) else expr
            relations = {normalize_name(k): v for k, v in (relvars or {}).items()
                         if isinstance(v, Relation)}
            query = compile_query(node, self.streams, relations, keep, self.fuse)
            self._add(query)
            for stream in query.streams.values():
                if stream.passed_bound is not None:
                    query._consume(stream, [], stream.passed_bound)
            return query

    def adopt(self, query: LiveQuery) -> LiveQuery:
        """Feed a query from this engine's streams instead of its own engine's (a restored
        query joining the engine its streams live on).

        Each stream the query reads must be here with the same heading and at the query's
        position: as many rows out as the query has consumed, and not bounded before the bound
        the query was given (a fresh stream numbering its rows from 1 again would otherwise be
        taken for a replay). To restore streams and queries together, use
        :meth:`StreamEngine.load` or the engine :meth:`LiveQuery.load` gives.

        Raises:
            StreamError: a stream the query reads is missing here, has another heading, or is
                not where the query left it.
        """
        with self.lock:
            for name, stream in query.streams.items():
                self._require_at(query, name, stream.heading)
            if query.engine is not None and query.engine is not self:
                query.engine.queries = [q for q in query.engine.queries if q is not query]
            query.streams = {name: self.streams[name] for name in query.streams}
            self._add(query)
            return query

    def _require_at(self, query, name, heading) -> None:
        mine = self.streams.get(name)
        where = query.inputs[name]
        if mine is None or mine.heading != heading:
            why = "is missing" if mine is None else f"has heading {mine.heading}"
        elif mine.seq != where.seq:
            why = f"has {mine.seq} rows out, the query consumed {where.seq}"
        elif where.bound is not None and (mine.passed_bound is None or
                                          mine.passed_bound < where.bound):
            why = f"is bounded at {mine.passed_bound}, the query at {where.bound}"
        else:
            return
        raise StreamError(f"cannot adopt the query: its stream '{name}' {why} here",
                          stream=name, producer=None)

    def _add(self, query):
        query.engine, query.lock = self, self.lock
        self.queries.append(query)

    def _feed(self, stream, bodies, bound):
        for query in self.queries:
            if query.error is not None or stream.name not in query.sources or \
                    query.inputs[stream.name].bound == INFINITY:
                continue  # a failed or finished query takes no more input
            try:
                query._take(stream, bodies, bound, False)  # as _consume, one call less
            except Exception:  # the query has stopped (query.error); the others go on
                LOG.exception("continuous query %s failed and stopped", query.node)

    def finish(self):
        """End of input on every stream: each query's pending results become final, and the
        streams refuse any later row (a row after the end would stop the queries)."""
        with self.lock:
            for stream in self.streams.values():
                stream.end()
            for query in self.queries:
                if query.error is not None:
                    continue
                try:
                    query.finish()
                except Exception:
                    LOG.exception("continuous query %s failed and stopped", query.node)

    def position(self) -> dict:
        """Each stream's producers' positions (:class:`ProducerPosition` by name), by stream."""
        with self.lock:
            return {name: stream.position() for name, stream in self.streams.items()}

    def save(self, path) -> None:
        """Checkpoint every stream and every query of this engine to ``path`` atomically (see
        :meth:`LiveQuery.save`); :meth:`load` restores them together."""
        from .checkpoint import save_checkpoint
        with self.lock:
            save_checkpoint(path, list(self.streams.values()), list(self.queries))

    @staticmethod
    def load(path, fuse: bool = True) -> "StreamEngine":
        """An engine restored from a checkpoint written by :meth:`save` or
        :meth:`LiveQuery.save`: its streams, producers and queries (``fuse``: as for a new
        engine; a checkpoint does not depend on it).

        Raises:
            CheckpointError: the file cannot be loaded (see :meth:`LiveQuery.load`).
        """
        from .checkpoint import load_checkpoint
        return load_checkpoint(path, fuse)


__all__ = ["StreamEngine", "LiveQuery", "NotSupportedLive", "QueryFailed", "StreamPosition",
           "compile_query"]
