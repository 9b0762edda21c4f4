"""Continuous queries: sira expressions over windows of live streams, evaluated incrementally.

A registered expression is compiled into a small dataflow of operators. Rows and bounds are
pushed through it operator by operator; a result leaves the query only once it is final, i.e.
once the bounds prove that no later input can change it. So, as SQLstream puts it, bounds never
change results, they only let them out sooner: the concatenation of everything a query emits
equals the batch evaluation of the same expression on the whole input, and nothing emitted is
ever retracted.

Two kinds of data flow between operators:

* a **stream** (rows with a rowtime), from named streams, through RESTRICT/EXTEND/PROJECT/
  RENAME and UNION (a merge by rowtime that waits for bounds on every input);
* a **temporal relation** (a CQL window's output, whose tuples hold during an interval), as a
  flow of changes ``(t, tuple, +1/-1)`` netted per instant, through RESTRICT/EXTEND/PROJECT/RENAME
  (counting per value, as PACK does), UNION, and a pointwise SUMMARIZEBY over ``during``;
  ISTREAM, DSTREAM and CHANGES turn it back into a stream, and a temporal relation at the top
  of a query is emitted as tuples with their ``during`` once each interval has closed.

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

import abc
import os
import pickle
import tempfile
from collections import deque
from operator import itemgetter

from sortedcontainers import SortedDict, SortedList

from ..algebra.aggregation import SummarizeBy, aggregations
from ..algebra.basic import Extend, Project, RelvarRef, Rename, Restrict
from ..algebra.setops import Union
from ..algebra.windows import Changes, DStream, IStream, Window
from ..errors import SiraError
from ..expressions.evaluate import compile_row
from ..intervals import Interval
from .named import NamedStream

INFINITY = float("inf")


class NotSupportedLive(SiraError):
    """The expression has a part the incremental runtime does not run."""

    fields = ("node",)

    def default_message(self):
        return f"{self.node} cannot run on live streams"


# ---------------------------------------------------------------------------------- operators

class Operator(abc.ABC):
    """A dataflow operator: receives items from its inputs and passes items downstream.

    Items: ``("row", t, body)`` on streams, ``("change", t, body, delta)`` on temporal
    relations (all changes of one instant arrive together, netted), ``("bound", b)``: no later
    item will have a time < b.
    """

    def __init__(self, node, heading):
        self.node = node
        self.heading = heading
        self.downstream: list = []  # (operator, port)
        self._fns = None

    def connect(self, op, port=0):
        self.downstream.append((op, port))

    def emit(self, item):
        for op, port in self.downstream:
            op.push(item, port)

    @abc.abstractmethod
    def push(self, item, port):
        """Receive one item on input ``port``."""

    def functions(self):
        """Compiled expressions, rebuilt after a restore (closures do not pickle)."""
        if self._fns is None:
            self._fns = self.compile()
        return self._fns

    def compile(self):
        return ()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_fns"] = None
        return state


def _relation_of(node):
    raise NotSupportedLive(node=f"a relational operand ({node.operator_name}) inside an "
                           f"expression")


class RowMap(Operator):
    """RESTRICT, EXTEND, PROJECT, RENAME on a stream or on a temporal relation's changes."""

    def __init__(self, node, heading, src_heading, temporal, during=None):
        super().__init__(node, heading)
        self.src_heading = src_heading
        self.temporal = temporal
        self.during = during
        self.counts: dict = {}  # value -> number of source tuples mapping to it (temporal)
        self.instant = None
        self.seen: set = set()  # stream: values already out at the current instant

    def compile(self):
        node, h = self.node, self.src_heading
        if isinstance(node, Restrict):
            cond = compile_row(node.condition, h, _relation_of)
            return (lambda row: row if cond(row) else None,)
        if isinstance(node, Extend):
            fns = [compile_row(e, h, _relation_of) for _, e in node.specs]
            where = {n: i for i, n in enumerate(h.names + tuple(n for n, _ in node.specs))}
            order = [where[n] for n in self.heading.names]
            return (lambda row: tuple((row + tuple(f(row) for f in fns))[i] for i in order),)
        if isinstance(node, Project):
            pos = [h.index(n) for n in self.heading.names]
            return (lambda row: tuple(row[i] for i in pos),)
        mapping = dict(node.pairs)
        renamed = [mapping.get(n, n) for n in h.names]
        pos = [renamed.index(n) for n in self.heading.names]
        return (lambda row: tuple(row[i] for i in pos),)

    def push(self, item, port):
        (fn,) = self.functions()
        if item[0] == "bound":
            self.emit(item)
            return
        if item[0] == "row":
            _, t, row = item
            out = fn(row)
            if out is None:
                return
            if t != self.instant:
                self.instant, self.seen = t, set()
            if out not in self.seen:  # set semantics: equal rows at one instant are one row
                self.seen.add(out)
                self.emit(("row", t, out))
            return
        if item[0] == "changes":
            _, t, changes = item
            net: dict = {}
            for row, delta in changes:
                out = fn(row)
                if out is not None:
                    net[out] = net.get(out, 0) + delta
            self.emit(("changes", t, _presence(self.counts, net)))


def _presence(counts: dict, net: dict) -> list:
    """Update per-value counts; the +1/-1 presence changes (a value is there while count > 0)."""
    out = []
    for value, delta in net.items():
        if delta == 0:
            continue
        before = counts.get(value, 0)
        after = before + delta
        if after:
            counts[value] = after
        else:
            counts.pop(value, None)
        if before == 0 and after > 0:
            out.append((value, 1))
        elif before > 0 and after == 0:
            out.append((value, -1))
    return out


class Source(Operator):
    """Rows and bounds from a named stream, in the stream's heading order."""

    def __init__(self, node, stream: NamedStream):
        super().__init__(node, stream.heading)
        self.stream_name = stream.name
        self.rowtime = stream.rowtime

    def feed(self, row: dict | None, bound):
        if row is not None:
            body = tuple(row[n] for n in self.heading.names)
            t = row[self.rowtime]
            self.emit(("bound", t))
            self.emit(("row", t, body))
        if bound is not None:
            self.emit(("bound", bound))

    def push(self, item, port):  # sources are fed, not pushed
        raise SiraError("a source has no input")


class Merge(Operator):
    """UNION of streams: rows leave in rowtime order once every input is bounded past them."""

    def __init__(self, node, heading, n_inputs):
        super().__init__(node, heading)
        self.bounds = [None] * n_inputs
        self.pending = SortedList(key=itemgetter(0))
        self.out_bound = None
        self.instant = None
        self.seen: set = set()
        self.counter = 0

    def push(self, item, port):
        if item[0] == "row":
            self.counter += 1
            self.pending.add((item[1], self.counter, item[2]))
            if self.bounds[port] is None or item[1] > self.bounds[port]:
                self.bounds[port] = item[1]
        else:
            b = item[1]
            if self.bounds[port] is None or b > self.bounds[port]:
                self.bounds[port] = b
        self._release()

    def _release(self):
        if any(b is None for b in self.bounds):
            return
        low = min(self.bounds)
        while self.pending and self.pending[0][0] <= low:
            t, _, row = self.pending.pop(0)
            if t != self.instant:
                self.instant, self.seen = t, set()
            if row not in self.seen:
                self.seen.add(row)
                self.emit(("row", t, row))
        if self.out_bound is None or low > self.out_bound:
            self.out_bound = low
            self.emit(("bound", low))


class InstantBuffer:
    """Rows grouped by instant; an instant closes when the bound passes it."""

    def __init__(self):
        self.rows = SortedDict()

    def add(self, t, row):
        self.rows.setdefault(t, []).append(row)

    def close_before(self, bound):
        """(t, rows) of every instant < bound, in time order, removed from the buffer."""
        out = []
        while self.rows and self.rows.keys()[0] < bound:
            out.append(self.rows.popitem(0))
        return out


class WindowOp(Operator):
    """A CQL window: each element's entry and exit as changes, released once final."""

    def __init__(self, node, heading, src_heading):
        super().__init__(node, heading)
        self.src_heading = src_heading
        self.buffer = InstantBuffer()
        self.events = SortedDict()  # t -> {element: delta}
        self.parts: dict = {}  # partition -> per-partition state
        self.bound = None

    # state per partition: list of (position, t, element) still relevant
    def compile(self):
        from ..engine.windows import _Time
        h = self.src_heading
        spec = self.node.spec
        part = [h.index(n) for n in spec.partition]
        key_fn = h.sort_key_function()
        if spec.arrival is not None:
            a = h.index(spec.arrival)
            order = lambda r: r[a]  # noqa: E731
        else:
            order = key_fn or (lambda r: r)
        on = h.index(spec.on) if spec.on else None
        return (lambda r: tuple(r[i] for i in part), order, _Time(self.node.ts_type), on)

    def push(self, item, port):
        if item[0] == "row":
            self.buffer.add(item[1], item[2])
            return
        b = item[1]
        if self.bound is not None and b <= self.bound:
            return
        self.bound = b
        part_of, order, time, on = self.functions()
        for t, rows in self.buffer.close_before(b):
            rows.sort(key=order)
            for row in rows:
                self._arrive(part_of(row), t, row, time, on)
        self._release(b)

    def _schedule(self, t, element, delta):
        if t is None:
            return
        slot = self.events.setdefault(t, {})
        slot[element] = slot.get(element, 0) + delta
        if slot[element] == 0:
            del slot[element]

    def _arrive(self, key, t, row, time, on):
        node, spec = self.node, self.node.spec
        state = self.parts.setdefault(key, {"n": 0, "recent": deque(), "pending": SortedList(),
                                            "exits": {}, "batch": []})
        state["n"] += 1
        p = state["n"]
        element = row
        rng, slide = node.range_units, node.slide_units
        if spec.kind == "now":
            self._schedule(t, element, 1)
            self._schedule(time.plus(t, 1), element, -1)
        elif spec.kind == "range" and spec.rows is None:
            if rng is None:
                self._schedule(t, element, 1)
            elif slide is None:
                self._schedule(t, element, 1)
                self._schedule(time.plus(t, rng), element, -1)
            else:
                begin, end = time.ceil(t, slide), time.ceil(time.plus(t, rng), slide)
                if begin < end:
                    self._schedule(begin, element, 1)
                    self._schedule(end, element, -1)
        elif spec.kind == "range_on":
            amount = spec.on_amount
            if hasattr(amount, "in_units"):
                import datetime
                amount = amount.in_units(None, node.ts_type) * datetime.timedelta(microseconds=1)
            pending = state["pending"]
            value = row[on]
            while pending and pending[0][0] <= value:
                _, _, old = pending.pop(0)
                self._schedule(t, old, -1)
            self._schedule(t, element, 1)
            pending.add((value + amount, p, element))
        elif spec.slide_rows is not None:  # rows N slide M
            m, n = spec.slide_rows, spec.rows
            state["batch"].append(element)
            state["exits"].setdefault(-(-(p + n) // m) * m, []).append(element)
            if p % m == 0:
                for e in state["batch"]:
                    self._schedule(t, e, 1)
                state["batch"] = []
            for e in state["exits"].pop(p, []):
                self._schedule(t, e, -1)
        else:  # rows N [range T [slide L]]
            begin = t if slide is None else time.ceil(t, slide)
            recent = state["recent"]
            recent.append((t, element, begin))
            if len(recent) > spec.rows:
                old_t, old, _ = recent.popleft()
                exit_t = t if slide is None else time.ceil(t, slide)
                limit = None if rng is None else time.plus(old_t, rng)
                if limit is not None and slide is not None:
                    limit = time.ceil(limit, slide)
                if limit is None or exit_t < limit:
                    self._schedule(limit, old, 1)  # cancel the range exit scheduled earlier
                    self._schedule(exit_t, old, -1)
            if begin is not None:
                self._schedule(begin, element, 1)
            if rng is not None:
                limit = time.plus(t, rng)
                if slide is not None:
                    limit = time.ceil(limit, slide)
                self._schedule(limit, element, -1)

    def _release(self, bound):
        while self.events and self.events.keys()[0] < bound:
            t, slot = self.events.popitem(0)
            changes = [(e, d) for e, d in slot.items() if d != 0]
            out = []
            for e, d in changes:
                out.append((self._with_time(e), 1 if d > 0 else -1))
            if out:
                self.emit(("changes", t, out))
        self.emit(("bound", bound))

    def _with_time(self, element):
        return element


class TemporalUnion(Operator):
    """UNION of temporal relations: changes merged by instant, counted per value."""

    def __init__(self, node, heading, n_inputs):
        super().__init__(node, heading)
        self.bounds = [None] * n_inputs
        self.pending = SortedDict()  # t -> {value: delta}
        self.counts: dict = {}
        self.out_bound = None

    def push(self, item, port):
        if item[0] == "changes":
            slot = self.pending.setdefault(item[1], {})
            for value, delta in item[2]:
                slot[value] = slot.get(value, 0) + delta
            return
        b = item[1]
        if self.bounds[port] is None or b > self.bounds[port]:
            self.bounds[port] = b
        if any(x is None for x in self.bounds):
            return
        low = min(self.bounds)
        while self.pending and self.pending.keys()[0] < low:
            t, net = self.pending.popitem(0)
            changes = _presence(self.counts, net)
            if changes:
                self.emit(("changes", t, changes))
        if self.out_bound is None or low > self.out_bound:
            self.out_bound = low
            self.emit(("bound", low))


class _Running:
    """An aggregate maintained as tuples come and go (exact operators only)."""

    def __init__(self, agg):
        self.result_type = agg.result_type  # (the Aggregation itself holds closures)
        self.op = agg.name
        self.total = 0
        self.values = SortedList() if self.op in ("max", "min") else None
        self.true = 0
        self.n = 0

    @staticmethod
    def supports(agg) -> bool:
        from ..types import INTEGER_TYPES
        return (agg.name == "plus" and agg.result_type in INTEGER_TYPES) or (
            agg.exact and agg.name in ("max", "min", "and", "or"))

    def change(self, value, delta):
        self.n += delta
        if self.op == "plus":
            self.total += value * delta
        elif self.values is not None:
            if delta > 0:
                self.values.add(value)
            else:
                self.values.remove(value)
        else:
            self.true += delta if value else 0

    def value(self):
        if self.op == "plus":
            return self.result_type.fit(self.total, operator="plus")
        if self.op == "max":
            return self.values[-1]
        if self.op == "min":
            return self.values[0]
        if self.op == "and":
            return self.true == self.n
        return self.true > 0


class TemporalSummarize(Operator):
    """SUMMARIZEBY ... USING (during): each group's aggregates at every instant, as changes.

    Integer sums, counts, max, min, and/or are maintained as tuples come and go; inexact
    aggregates (FLOAT, AVERAGE...) are folded again from the group's current tuples in the
    batch engine's order, so both give the same bits.
    """

    def __init__(self, node, heading, src_heading):
        super().__init__(node, heading)
        self.src_heading = src_heading
        self.groups: dict = {}  # key -> (set of current source tuples, [running or None])
        self.values: dict = {}  # key -> current output tuple

    def compile(self):
        h = self.src_heading
        node = self.node
        key_names = [n for n in node.by if n not in node.using]
        key = [h.index(n) for n in key_names]
        aggs = aggregations(node.specs, self.node.source.heading, "SUMMARIZEBY")
        fns = [compile_row(e, h, _relation_of) for _, _, e in node.specs]
        where = {n: i for i, n in enumerate(key_names + [n for n, _, _ in node.specs])}
        order = [where[n] for n in self.heading.names]
        return (row_getter_tuple(key), aggs, fns, order)

    def push(self, item, port):
        if item[0] == "bound":
            self.emit(item)
            return
        from ..engine.aggregation import fold
        key_of, aggs, fns, order = self.functions()
        _, t, changes = item
        touched = set()
        for row, delta in changes:
            k = key_of(row)
            group = self.groups.get(k)
            if group is None:
                group = self.groups[k] = (set(), [_Running(a) if _Running.supports(a) else None
                                                  for a in aggs])
            members, running = group
            if delta > 0:
                members.add(row)
            else:
                members.discard(row)
            for r, f in zip(running, fns):
                if r is not None:
                    r.change(f(row), delta)
            touched.add(k)
        out = []
        for k in touched:
            members, running = self.groups[k]
            old = self.values.get(k)
            if members:
                vals = tuple(r.value() if r is not None else fold(a, [f(m) for m in members])
                             for r, a, f in zip(running, aggs, fns))
                full = k + vals
                new = tuple(full[i] for i in order)
                self.values[k] = new
            else:
                new = None
                self.values.pop(k, None)
                del self.groups[k]
            if old != new:
                if old is not None:
                    out.append((old, -1))
                if new is not None:
                    out.append((new, 1))
        if out:
            self.emit(("changes", t, out))


def row_getter_tuple(positions):
    """The values at ``positions`` as a tuple (compiled again after a restore)."""
    from ..engine.basic import row_getter
    return row_getter(positions)


class ToStream(Operator):
    """ISTREAM, DSTREAM, CHANGES: a temporal relation's changes as stream rows."""

    def __init__(self, node, heading, src_heading):
        super().__init__(node, heading)
        self.src_heading = src_heading

    def compile(self):
        names = list(self.src_heading.names)
        if isinstance(self.node, Changes):
            where = {n: i for i, n in enumerate(names + [self.node.at, "kind"])}
        else:
            where = {n: i for i, n in enumerate(names + [self.node.at])}
        return ([where[n] for n in self.heading.names],)

    def push(self, item, port):
        if item[0] == "bound":
            self.emit(item)
            return
        (order,) = self.functions()
        _, t, changes = item
        rows = []
        for row, delta in changes:
            if isinstance(self.node, IStream) and delta > 0:
                rows.append(row + (t,))
            elif isinstance(self.node, DStream) and delta < 0:
                rows.append(row + (t,))
            elif isinstance(self.node, Changes):
                rows.append(row + (t, "+" if delta > 0 else "-"))
        for row in rows:
            self.emit(("row", t, tuple(row[i] for i in order)))


class Sink(Operator):
    """The end of a query: collects final results and calls subscribers."""

    def __init__(self, node, heading, temporal, during=None):
        super().__init__(node, heading)
        self.temporal = temporal
        self.during = during
        self.results: list = []
        self.open: dict = {}  # temporal: value -> begin
        self.subscribers: list = []
        self.bound = None

    def push(self, item, port):
        if item[0] == "bound":
            self.bound = item[1]
            return
        if item[0] == "row":
            self._out(item[2])
            return
        _, t, changes = item
        for value, delta in changes:
            if delta > 0:
                self.open[value] = t
            else:
                begin = self.open.pop(value)
                self._out_interval(value, begin, t)

    def finish(self):
        """End of input: temporal tuples still open hold until further notice."""
        for value, begin in sorted(self.open.items(), key=lambda kv: repr(kv)):
            self._out_interval(value, begin, None)
        self.open = {}

    def _out_interval(self, value, begin, end):
        row = list(value)
        row.insert(self.heading.names.index(self.during), Interval(begin, end))
        self._out(tuple(row))

    def _out(self, body):
        self.results.append(body)
        row = dict(zip(self.heading.names, body))
        for callback in list(self.subscribers):
            try:
                callback(row, self.bound)
            except Exception:  # a subscriber that raises must not corrupt the query
                import logging
                logging.getLogger("sira.streams").exception("query subscriber raised")


# ---------------------------------------------------------------------------------- compiling

class LiveQuery:
    """A registered continuous query: its dataflow, its results so far, checkpoints."""

    def __init__(self, node, sources: dict, sink: Sink):
        self.node = node
        self.sources = sources  # stream name -> [Source, ...]
        self.sink = sink

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
        for source in self.sources.get(stream_name, ()):
            source.feed(row, bound)

    def finish(self) -> None:
        """Declare the input complete: every pending result becomes final."""
        for sources in self.sources.values():
            for source in sources:
                source.emit(("bound", INFINITY))
        self.sink.finish()

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


def compile_query(node, streams: dict) -> LiveQuery:
    """The dataflow of ``node`` over named ``streams``; NotSupportedLive for what cannot run."""
    sources: dict = {}

    def build(n):
        """(operator producing n's output, temporal?)"""
        if isinstance(n, RelvarRef):
            stream = streams.get(n.name)
            if stream is None:
                raise NotSupportedLive(node=f"relvar '{n.name}' (not a live stream)")
            op = Source(n, stream)
            sources.setdefault(stream.name, []).append(op)
            return op, False
        if isinstance(n, (Restrict, Extend, Project, Rename)):
            src, temporal = build(n.source)
            during = None
            if temporal:
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
                        temporal)
            src.connect(op)
            return op, temporal
        if isinstance(n, Union):
            built = [build(s) for s in n.sources]
            temporal = built[0][1]
            if any(t != temporal for _, t in built):
                raise NotSupportedLive(node="a UNION of a stream and a temporal relation")
            if temporal:
                during = _during_of(n)
                op = TemporalUnion(n, _without(n.heading, during), len(built))
            else:
                op = Merge(n, n.heading, len(built))
            for port, (child, _) in enumerate(built):
                child.connect(op, port)
            return op, temporal
        if isinstance(n, Window):
            src, temporal = build(n.source)
            if temporal:
                raise NotSupportedLive(node="a window over a temporal relation")
            op = WindowOp(n, n.source.heading, n.source.heading)
            src.connect(op)
            return op, True
        if isinstance(n, SummarizeBy):
            src, temporal = build(n.source)
            during = _during_of(n.source) if temporal else None
            if not temporal or n.using != (during,) or during not in n.by or any(
                    during in _attrs_of(e) for _, _, e in n.specs):
                raise NotSupportedLive(node="a SUMMARIZEBY other than summarizebyusing(W, "
                                       "(..., during), specs, (during)) over a window")
            op = TemporalSummarize(n, _without(n.heading, during),
                                   _without(n.source.heading, during))
            src.connect(op)
            return op, True
        if isinstance(n, (IStream, DStream, Changes)):
            src, temporal = build(n.source)
            if not temporal or n.during != _during_of(n.source):
                raise NotSupportedLive(node=f"{n.operator_name} of something not a window")
            op = ToStream(n, n.heading, _without(n.source.heading, n.during))
            src.connect(op)
            return op, False
        raise NotSupportedLive(node=n.operator_name)

    top, temporal = build(node)
    during = _during_of(node) if temporal else None
    sink = Sink(node, node.heading, temporal, during)
    top.connect(sink)
    return LiveQuery(node, sources, sink)


def _during_of(node) -> str:
    while not isinstance(node, Window):
        node = node.children[0] if not isinstance(node, SummarizeBy) else node.source
    return node.during


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
        stream.subscribe(lambda row, bound, s=stream.name: self._feed(s, row, bound))
        return stream

    def register(self, expr, relvars: dict | None = None) -> LiveQuery:
        """Register a continuous query (text or tree) over the named streams."""
        import sira
        catalog = {name: s.heading for name, s in self.streams.items()}
        catalog.update({k: v for k, v in (relvars or {}).items()})
        node = sira.parse(expr, catalog) if isinstance(expr, str) else expr
        query = compile_query(node, self.streams)
        self.queries.append(query)
        for name, stream in self.streams.items():
            if name in query.sources and stream.bound is not None:
                query.feed(name, None, stream.bound)
        return query

    def adopt(self, query: LiveQuery) -> LiveQuery:
        """Attach a restored query to this engine's streams."""
        self.queries.append(query)
        return query

    def _feed(self, stream_name, row, bound):
        for query in self.queries:
            query.feed(stream_name, row, bound)

    def finish(self):
        for query in self.queries:
            query.finish()


__all__ = ["StreamEngine", "LiveQuery", "NotSupportedLive", "compile_query"]
