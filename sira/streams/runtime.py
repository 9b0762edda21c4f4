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

import abc
import os
import pickle
import tempfile
from collections import deque
from operator import itemgetter

from sortedcontainers import SortedDict, SortedList

from ..algebra.aggregation import SummarizeBy, aggregations
from ..algebra.basic import Extend, Project, RelvarRef, Rename, Restrict
from ..algebra.joins import Join, SemiJoin, SemiMinus
from ..algebra.packing import interval_names
from ..algebra.setops import Intersect, Minus, Union, XMinus
from ..algebra.windows import Changes, DStream, IStream, Window
from ..engine.aggregation import fold
from ..errors import SiraError
from ..expressions.evaluate import compile_row
from ..intervals import Interval
from ..values import Relation, normalize_name
from .named import NamedStream

INFINITY = float("inf")


class NotSupportedLive(SiraError):
    """The expression has a part the incremental runtime does not run."""

    fields = ("node",)

    def default_message(self):
        return f"{self.node} cannot run on live streams"


# ---------------------------------------------------------------------------------- operators

class Operator(abc.ABC):
    """A dataflow operator: receives batches from its inputs and passes batches downstream.

    Three kinds of input, each a method: ``on_rows(rows, port)`` with a train of stream rows
    ``[(t, body), ...]`` in rowtime order; ``on_changes(batch, port)`` with a temporal
    relation's changes ``[(t, [(body, +1 or -1), ...]), ...]``, one entry per instant, in time
    order, netted; ``on_bound(b, port)``: no later input will have a time < b. Rows at t also
    promise that nothing earlier than t follows on that input.
    """

    def __init__(self, node, heading):
        self.node = node
        self.heading = heading
        self.downstream: list = []  # (operator, port)
        self._fns = None

    def connect(self, op, port=0):
        self.downstream.append((op, port))

    def emit_rows(self, rows):
        for op, port in self.downstream:
            op.on_rows(rows, port)

    def emit_changes(self, batch):
        for op, port in self.downstream:
            op.on_changes(batch, port)

    def emit_bound(self, b):
        for op, port in self.downstream:
            op.on_bound(b, port)

    def on_rows(self, rows, port):
        raise SiraError(f"internal: {type(self).__name__} takes no stream rows")

    def on_changes(self, batch, port):
        raise SiraError(f"internal: {type(self).__name__} takes no temporal changes")

    @abc.abstractmethod
    def on_bound(self, b, port):
        """Receive a bound on input ``port``."""

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
    """RESTRICT, EXTEND, PROJECT, RENAME on a stream or on a temporal relation's changes.

    Only PROJECT can map two different tuples to one; the others pass set semantics through
    without bookkeeping, PROJECT keeps the values seen at the current instant (streams) or a
    count of source tuples per value (temporal relations, as PACK would).
    """

    def __init__(self, node, heading, src_heading, temporal, during=None):
        super().__init__(node, heading)
        self.src_heading = src_heading
        self.temporal = temporal
        self.during = during
        self.merges = isinstance(node, Project)
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

    def on_bound(self, b, port):
        self.emit_bound(b)

    def on_rows(self, rows, port):
        (fn,) = self.functions()
        out = []
        for t, row in rows:
            value = fn(row)
            if value is None:
                continue
            if self.merges:  # set semantics: equal rows at one instant are one row
                if t != self.instant:
                    self.instant, self.seen = t, set()
                if value in self.seen:
                    continue
                self.seen.add(value)
            out.append((t, value))
        if out:
            self.emit_rows(out)

    def on_changes(self, batch, port):
        (fn,) = self.functions()
        out = []
        for t, changes in batch:
            if self.merges:
                net: dict = {}
                for row, delta in changes:
                    value = fn(row)
                    net[value] = net.get(value, 0) + delta
                mapped = _presence(self.counts, net)
            else:
                mapped = [(value, delta) for value, delta in
                          ((fn(row), delta) for row, delta in changes) if value is not None]
            if mapped:
                out.append((t, mapped))
        if out:
            self.emit_changes(out)


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
    """Rows and bounds from a named stream, as body tuples in the stream's heading order."""

    def __init__(self, node, stream: NamedStream):
        super().__init__(node, stream.heading)
        self.stream_name = stream.name
        self.rowtime = stream.rowtime
        self.at = stream.heading.index(stream.rowtime)

    def feed(self, row: dict | None, bound):
        """One row (a dict by attribute name, as streams give their subscribers) and/or a bound."""
        bodies = [] if row is None else [tuple(row[n] for n in self.heading.names)]
        self.feed_train(bodies, bound)

    def feed_train(self, bodies: list, bound):
        """Rows (body tuples in rowtime order) leaving the stream, then its bound (or None)."""
        if bodies:
            at = self.at
            self.emit_rows([(body[at], body) for body in bodies])
            last = bodies[-1][at]
            if bound is None or bound < last:
                bound = last
        if bound is not None:
            self.emit_bound(bound)

    def on_bound(self, b, port):  # sources are fed, not pushed
        raise SiraError("internal: a source has no input")


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

    def on_rows(self, rows, port):
        for t, row in rows:
            self.counter += 1
            self.pending.add((t, self.counter, row))
        self._advance(port, rows[-1][0])

    def on_bound(self, b, port):
        self._advance(port, b)

    def _advance(self, port, b):
        if self.bounds[port] is None or b > self.bounds[port]:
            self.bounds[port] = b
        if any(x is None for x in self.bounds):
            return
        low = min(self.bounds)
        out = []
        while self.pending and self.pending[0][0] <= low:
            t, _, row = self.pending.pop(0)
            if t != self.instant:
                self.instant, self.seen = t, set()
            if row not in self.seen:
                self.seen.add(row)
                out.append((t, row))
        if out:
            self.emit_rows(out)
        if self.out_bound is None or low > self.out_bound:
            self.out_bound = low
            self.emit_bound(low)


class WindowOp(Operator):
    """A CQL window: each element's entry and exit as changes, released once final.

    Rows wait in ``buffer`` until a bound closes their instant. ``S[range T]`` and ``S[now]``
    (an element leaves T units after it came) keep the elements still inside in a FIFO of
    exits, since exits come in arrival order; every other kind schedules entries and exits in a
    sorted map of instants.
    """

    def __init__(self, node, heading, src_heading):
        super().__init__(node, heading)
        self.src_heading = src_heading
        self.buffer: deque = deque()  # [t, [rows]] per open instant, in time order
        self.events = SortedDict()  # t -> {element: delta}  (general kinds)
        self.exits: deque = deque()  # (t, element)  (range T and now)
        self.parts: dict = {}  # partition -> per-partition state
        self.bound = None
        spec = node.spec
        self.fifo = spec.kind == "now" or (spec.kind == "range" and spec.rows is None and
                                           node.slide_units is None)

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

    def on_rows(self, rows, port):
        buffer = self.buffer
        for t, row in rows:  # rows come in time order
            if buffer and buffer[-1][0] == t:
                buffer[-1][1].append(row)
            else:
                buffer.append([t, [row]])

    def on_bound(self, b, port):
        if self.bound is not None and b <= self.bound:
            return
        self.bound = b
        closed = []
        buffer = self.buffer
        while buffer and buffer[0][0] < b:
            closed.append(buffer.popleft())
        if self.fifo:
            out = self._fifo(closed, b)
        else:
            part_of, order, time, on = self.functions()
            for t, rows in closed:
                rows.sort(key=order)
                for row in rows:
                    self._arrive(part_of(row), t, row, time, on)
            out = self._release(b)
        if out:
            self.emit_changes(out)
        self.emit_bound(b)

    def _fifo(self, closed, bound):
        """Changes of ``S[range T]``/``S[now]`` up to ``bound``: entries now, exits T later."""
        time = self.functions()[2]
        units = 1 if self.node.spec.kind == "now" else self.node.range_units  # None: unbounded
        exits = self.exits
        out = []
        for t, rows in closed:
            self._leave_before(t, out)
            if len(rows) > 1:
                rows = list(dict.fromkeys(rows))
            changes = [(row, 1) for row in rows]
            while exits and exits[0][0] == t:
                changes.append((exits.popleft()[1], -1))
            out.append((t, changes))
            if units is not None:
                until = time.plus(t, units)
                exits.extend([(until, row) for row in rows])
        self._leave_before(bound, out)
        return out

    def _leave_before(self, t, out):
        """Exits before ``t``, one entry of ``out`` per instant."""
        exits = self.exits
        while exits and exits[0][0] < t:
            at = exits[0][0]
            gone = []
            while exits and exits[0][0] == at:
                gone.append((exits.popleft()[1], -1))
            out.append((at, gone))

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
        if spec.kind == "range" and spec.rows is None:  # with a slide (fifo handles the rest)
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
        out = []
        events = self.events
        while events and events.keys()[0] < bound:
            t, slot = events.popitem(0)
            changes = [(e, 1 if d > 0 else -1) for e, d in slot.items() if d != 0]
            if changes:
                out.append((t, changes))
        return out


class _Aligned(Operator):
    """A temporal operator over several inputs: each instant's changes wait in ``pending``
    (t -> slot) until every input is bounded past it, then ``instant(slot)`` gives the output
    changes, in time order."""

    def __init__(self, node, heading, n_inputs):
        super().__init__(node, heading)
        self.bounds = [None] * n_inputs
        self.pending = SortedDict()
        self.out_bound = None

    @abc.abstractmethod
    def instant(self, slot) -> list:
        """The output changes of one instant whose inputs are all known."""

    def on_bound(self, b, port):
        if self.bounds[port] is None or b > self.bounds[port]:
            self.bounds[port] = b
        if None in self.bounds:
            return
        low = min(self.bounds)
        out = []
        while self.pending and self.pending.keys()[0] < low:
            t, slot = self.pending.popitem(0)
            changes = self.instant(slot)
            if changes:
                out.append((t, changes))
        if out:
            self.emit_changes(out)
        if self.out_bound is None or low > self.out_bound:
            self.out_bound = low
            self.emit_bound(low)


class TemporalSetOp(_Aligned):
    """UNION, INTERSECT, MINUS, XMINUS of temporal relations, pointwise: at each instant a value
    is in the result according to which inputs hold it (a bit per input in ``holders``)."""

    KEEP = {
        "union": lambda mask, full: mask != 0,
        "intersect": lambda mask, full: mask == full,
        "minus": lambda mask, full: mask == 1,  # in the left input only
        "xminus": lambda mask, full: bin(mask).count("1") % 2 == 1,
    }

    def __init__(self, node, heading, n_inputs, kind):
        super().__init__(node, heading, n_inputs)
        self.kind = kind
        self.full = (1 << n_inputs) - 1
        self.holders: dict = {}  # value -> bit mask of the inputs holding it now

    def on_changes(self, batch, port):
        for t, changes in batch:
            slot = self.pending.setdefault(t, [])
            slot.extend((value, delta, port) for value, delta in changes)

    def instant(self, slot):
        keep, full, holders = self.KEEP[self.kind], self.full, self.holders
        before = {}
        for value, delta, port in slot:
            mask = holders.get(value, 0)
            before.setdefault(value, mask)
            mask = mask | (1 << port) if delta > 0 else mask & ~(1 << port)
            if mask:
                holders[value] = mask
            else:
                holders.pop(value, None)
        out = []
        for value, mask in before.items():
            was, now = keep(mask, full), keep(holders.get(value, 0), full)
            if was != now:
                out.append((value, 1 if now else -1))
        return out


class _Keyed:
    """A set of tuples indexed by the values at some positions (a join's current contents)."""

    def __init__(self, positions):
        self.positions = list(positions)
        self.index: dict = {}  # key -> set of tuples

    def key(self, row):
        return tuple([row[i] for i in self.positions])

    def change(self, row, delta):
        k = self.key(row)
        if delta > 0:
            self.index.setdefault(k, set()).add(row)
        else:
            members = self.index[k]
            members.discard(row)
            if not members:
                del self.index[k]

    def matching(self, key):
        return self.index.get(key, ())


def _static_keyed(relation, positions):
    keyed = _Keyed(positions)
    for row in relation.body:
        keyed.change(row, 1)
    return keyed


class _JoinShape:
    """How two tuples of a natural join's operands combine: the key positions on each side and
    the result's attributes picked from the concatenation (left + right)."""

    def __init__(self, left_heading, right_heading, out_heading):
        common = [n for n in left_heading.names if n in right_heading]
        self.left_key = [left_heading.index(n) for n in common]
        self.right_key = [right_heading.index(n) for n in common]
        where = {n: i for i, n in enumerate(left_heading.names)}
        offset = left_heading.degree
        for i, n in enumerate(right_heading.names):
            where.setdefault(n, offset + i)
        self.pick = [where[n] for n in out_heading.names]

    def combiner(self):
        n = len(self.pick)
        if self.pick == list(range(n)):  # the left tuple's attributes and then the right's
            return lambda left, right: (left + right)[:n]
        pick = _reorder(self.pick)
        return lambda left, right: pick(left + right)


class TemporalJoin(_Aligned):
    """JOIN, SEMIJOIN or SEMIMINUS at every instant, of two temporal relations or of a temporal
    relation (left) and a constant one (``static``, a Relation on the right).

    Changes wait until both inputs are bounded past their instant. A JOIN then follows the
    delta rule, Δ(L ⋈ R) = ΔL ⋈ R(before) + L(after) ⋈ ΔR, looking matches up by the common
    attributes; a semijoin re-decides the tuples of L whose key was touched.
    """

    def __init__(self, node, heading, left_heading, right_heading, kind, static=None):
        super().__init__(node, heading, 2)
        self.kind = kind  # "join", "semijoin" or "semiminus"
        self.shape = _JoinShape(left_heading, right_heading, heading)
        self.left = _Keyed(self.shape.left_key)
        self.right = _static_keyed(static, self.shape.right_key) if static is not None \
            else _Keyed(self.shape.right_key)
        if static is not None:  # a constant never changes: bounded for ever
            self.bounds[1] = INFINITY

    def compile(self):
        return (self.shape.combiner(),)

    def on_changes(self, batch, port):
        for t, changes in batch:
            slot = self.pending.get(t)
            if slot is None:
                slot = self.pending[t] = ([], [])  # left changes, right changes
            slot[port].extend(changes)

    def instant(self, slot):
        dl, dr = slot
        return self._join(dl, dr) if self.kind == "join" else self._semi(dl, dr)

    def _join(self, dl, dr):
        (combine,) = self.functions()
        left, right = self.left, self.right
        net: dict = {}
        for row, delta in dl:
            for match in right.matching(left.key(row)):
                value = combine(row, match)
                net[value] = net.get(value, 0) + delta
            left.change(row, delta)
        for row, delta in dr:
            for match in left.matching(right.key(row)):
                value = combine(match, row)
                net[value] = net.get(value, 0) + delta
            right.change(row, delta)
        return [(value, d) for value, d in net.items() if d]

    def _semi(self, dl, dr):
        left, right = self.left, self.right
        keys = {left.key(row) for row, _ in dl} | {right.key(row) for row, _ in dr}
        wanted = self.kind == "semijoin"
        before = {k: set(left.matching(k)) if bool(right.matching(k)) == wanted else set()
                  for k in keys}
        for row, delta in dl:
            left.change(row, delta)
        for row, delta in dr:
            right.change(row, delta)
        out = []
        for k in keys:
            after = set(left.matching(k)) if bool(right.matching(k)) == wanted else set()
            out.extend((row, -1) for row in before[k] - after)
            out.extend((row, 1) for row in after - before[k])
        return out


class StreamJoin(Operator):
    """JOIN, SEMIJOIN or SEMIMINUS of a stream with a constant relation: each row on its own."""

    def __init__(self, node, heading, left_heading, static, kind):
        super().__init__(node, heading)
        self.kind = kind
        self.shape = _JoinShape(left_heading, static.heading, heading)
        self.right = _static_keyed(static, self.shape.right_key)

    def compile(self):
        return (self.shape.combiner(), row_getter_tuple(self.shape.left_key))

    def on_bound(self, b, port):
        self.emit_bound(b)

    def on_rows(self, rows, port):
        combine, key_of = self.functions()
        index = self.right.index
        if self.kind == "join":
            out = [(t, combine(row, match)) for t, row in rows
                   for match in index.get(key_of(row), ())]
        else:
            wanted = self.kind == "semijoin"
            out = [(t, row) for t, row in rows if (key_of(row) in index) == wanted]
        if out:
            self.emit_rows(out)


class _Running:
    """An aggregate maintained as tuples come and go (exact operators only); ``of(agg)`` picks
    the kind: an integer sum, a max/min over a sorted list, or an and/or counting trues."""

    @staticmethod
    def supports(agg) -> bool:
        from ..types import INTEGER_TYPES
        return (agg.name == "plus" and agg.result_type in INTEGER_TYPES) or (
            agg.exact and agg.name in ("max", "min", "and", "or"))

    @staticmethod
    def of(agg):
        if not _Running.supports(agg):
            return None
        if agg.name == "plus":
            return _RunningSum(agg.result_type)
        if agg.name in ("max", "min"):
            return _RunningExtreme(agg.name == "max")
        return _RunningLogic(agg.name == "and")


class _RunningSum:
    def __init__(self, result_type):
        self.result_type = result_type  # (the Aggregation itself holds closures)
        self.total = 0

    def change(self, value, delta):
        self.total += value if delta > 0 else -value

    def value(self):
        return self.result_type.fit(self.total, operator="plus")


class _RunningExtreme:
    def __init__(self, is_max):
        self.is_max = is_max
        self.values = SortedList()

    def change(self, value, delta):
        if delta > 0:
            self.values.add(value)
        else:
            self.values.remove(value)

    def value(self):
        return self.values[-1] if self.is_max else self.values[0]


class _RunningLogic:
    def __init__(self, is_and):
        self.is_and = is_and
        self.n = 0
        self.true = 0

    def change(self, value, delta):
        self.n += delta
        if value:
            self.true += delta

    def value(self):
        return self.true == self.n if self.is_and else self.true > 0


class TemporalSummarize(Operator):
    """SUMMARIZEBY ... USING (during): each group's aggregates at every instant, as changes.

    Integer sums, counts, max, min, and/or are maintained as tuples come and go; inexact
    aggregates (FLOAT, AVERAGE...) are folded again from the group's current tuples in the
    batch engine's order, so both give the same bits. A group is ``[members, size, running]``
    (members kept only when some aggregate needs them).
    """

    def __init__(self, node, heading, src_heading):
        super().__init__(node, heading)
        self.src_heading = src_heading
        self.groups: dict = {}  # key -> [set of current source tuples or None, size, running]
        self.values: dict = {}  # key -> current output tuple

    def compile(self):
        h = self.src_heading
        node = self.node
        key_names = [n for n in node.by if n not in node.using]
        key = [h.index(n) for n in key_names]
        aggs = aggregations(node.specs, self.node.source.heading, "SUMMARIZEBY")
        fns = [compile_row(e, h, _relation_of) for _, _, e in node.specs]
        where = {n: i for i, n in enumerate(key_names + [n for n, _, _ in node.specs])}
        folds = not all(_Running.supports(a) for a in aggs)
        return (row_getter_tuple(key), aggs, fns, _reorder([where[n] for n in self.heading.names]),
                folds)

    def on_bound(self, b, port):
        self.emit_bound(b)

    def on_changes(self, batch, port):
        key_of, aggs, fns, order, folds = self.functions()
        groups, values = self.groups, self.values
        out = []
        for t, changes in batch:
            touched = {}  # key -> its output tuple before this instant
            for row, delta in changes:
                k = key_of(row)
                group = groups.get(k)
                if group is None:
                    group = groups[k] = [set() if folds else None, 0,
                                         [_Running.of(a) for a in aggs]]
                if k not in touched:
                    touched[k] = values.get(k)
                if folds:
                    if delta > 0:
                        group[0].add(row)
                    else:
                        group[0].discard(row)
                group[1] += delta
                for r, f in zip(group[2], fns):
                    if r is not None:
                        r.change(f(row), delta)
            emitted = self._outputs(touched)
            if emitted:
                out.append((t, emitted))
        if out:
            self.emit_changes(out)

    def _outputs(self, touched: dict) -> list:
        """The output changes of the groups ``touched`` (key -> output tuple before)."""
        _, aggs, fns, order, folds = self.functions()[:5]
        groups, values = self.groups, self.values
        emitted = []
        for k, old in touched.items():
            members, size, running = groups[k]
            if size:
                if folds:
                    vals = tuple([r.value() if r is not None else
                                  fold(a, [f(m) for m in members])
                                  for r, a, f in zip(running, aggs, fns)])
                else:
                    vals = tuple([r.value() for r in running])
                new = k + vals
                if order is not None:
                    new = order(new)
                values[k] = new
            else:
                new = None
                values.pop(k, None)
                del groups[k]
            if old != new:
                if old is not None:
                    emitted.append((old, -1))
                if new is not None:
                    emitted.append((new, 1))
        return emitted


class WindowSummarize(TemporalSummarize):
    """``summarizebyusing(window(S, ts, range(T) or now), (..., during), specs, (during))`` in
    one operator, when every aggregate is maintained running: an element's group and aggregate
    inputs are computed once, on arrival, and its exit T later replays them with the opposite
    sign from a FIFO, without building the window's changes in between."""

    def __init__(self, node, heading, src_heading, window):
        super().__init__(node, heading, src_heading)
        self.window = window
        self.buffer: deque = deque()  # [t, [rows]] per open instant, in time order
        self.exits: deque = deque()  # (t, key, aggregate inputs) of elements in the window
        self.bound = None

    @staticmethod
    def fits(summarize, window) -> bool:
        spec = window.spec
        fifo = spec.kind == "now" or (spec.kind == "range" and spec.rows is None and
                                      window.slide_units is None)
        aggs = aggregations(summarize.specs, summarize.source.heading, "SUMMARIZEBY")
        return fifo and all(_Running.supports(a) for a in aggs)

    def compile(self):
        from ..engine.windows import _Time
        return super().compile() + (_Time(self.window.ts_type),)

    def on_rows(self, rows, port):
        buffer = self.buffer
        for t, row in rows:  # rows come in time order
            if buffer and buffer[-1][0] == t:
                buffer[-1][1].append(row)
            else:
                buffer.append([t, [row]])

    def on_changes(self, batch, port):
        raise SiraError("internal: a fused window takes stream rows")

    def on_bound(self, b, port):
        if self.bound is not None and b <= self.bound:
            return
        self.bound = b
        key_of, aggs, fns, _, _, time = self.functions()
        units = 1 if self.window.spec.kind == "now" else self.window.range_units
        buffer, exits, groups, values = self.buffer, self.exits, self.groups, self.values
        out = []
        while buffer and buffer[0][0] < b:
            t, rows = buffer.popleft()
            self._leave_before(t, out)
            if len(rows) > 1:
                rows = list(dict.fromkeys(rows))
            touched: dict = {}
            until = None if units is None else time.plus(t, units)
            for row in rows:
                k = key_of(row)
                inputs = tuple([f(row) for f in fns])
                group = groups.get(k)
                if group is None:
                    group = groups[k] = [None, 0, [_Running.of(a) for a in aggs]]
                if k not in touched:
                    touched[k] = values.get(k)
                group[1] += 1
                for r, v in zip(group[2], inputs):
                    r.change(v, 1)
                if until is not None:
                    exits.append((until, k, inputs))
            self._leave_at(t, touched)
            emitted = self._outputs(touched)
            if emitted:
                out.append((t, emitted))
        self._leave_before(b, out)
        if out:
            self.emit_changes(out)
        self.emit_bound(b)

    def _leave_at(self, t, touched):
        """Apply the exits at instant ``t`` (noting the groups they touch)."""
        exits, groups, values = self.exits, self.groups, self.values
        while exits and exits[0][0] == t:
            _, k, inputs = exits.popleft()
            group = groups[k]
            if k not in touched:
                touched[k] = values.get(k)
            group[1] -= 1
            for r, v in zip(group[2], inputs):
                r.change(v, -1)

    def _leave_before(self, t, out):
        """The exits at instants before ``t``, one entry of ``out`` per instant."""
        exits = self.exits
        while exits and exits[0][0] < t:
            at = exits[0][0]
            touched: dict = {}
            self._leave_at(at, touched)
            emitted = self._outputs(touched)
            if emitted:
                out.append((at, emitted))


def _same(row):
    return row


def _reorder(positions):
    """None when ``positions`` keep a tuple as it is, else a function picking them in order."""
    if positions == list(range(len(positions))):
        return None
    if len(positions) == 1:
        (i,) = positions
        return lambda row: (row[i],)
    return itemgetter(*positions)


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
        return (_reorder([where[n] for n in self.heading.names]),)

    def on_bound(self, b, port):
        self.emit_bound(b)

    def on_changes(self, batch, port):
        (order,) = self.functions()
        node = self.node
        keep = {IStream: 1, DStream: -1}.get(type(node))  # None: CHANGES keeps both
        order = order or _same
        rows = []
        for t, changes in batch:
            for row, delta in changes:
                if keep is None:
                    rows.append((t, order(row + (t, "+" if delta > 0 else "-"))))
                elif delta == keep:
                    rows.append((t, order(row + (t,))))
        if rows:
            self.emit_rows(rows)


class Sink(Operator):
    """The end of a query: collects final results (when ``keep``) and calls subscribers."""

    def __init__(self, node, heading, temporal, during=None, keep=True):
        super().__init__(node, heading)
        self.temporal = temporal
        self.during = during
        self.keep = keep
        self.results: list = []
        self.open: dict = {}  # temporal: value -> begin
        self.subscribers: list = []
        self.bound = None

    def on_bound(self, b, port):
        self.bound = b

    def on_rows(self, rows, port):
        if not self.subscribers:
            if self.keep:
                self.results.extend(row for _, row in rows)
            return
        for t, row in rows:
            self._out(row, t)

    def on_changes(self, batch, port):
        for t, changes in batch:
            for value, delta in changes:
                if delta > 0:
                    self.open[value] = t
                else:
                    begin = self.open.pop(value)
                    self._out_interval(value, begin, t, t)

    def finish(self):
        """End of input: temporal tuples still open hold until further notice."""
        for value, begin in sorted(self.open.items(), key=lambda kv: repr(kv)):
            self._out_interval(value, begin, None, INFINITY)
        self.open = {}

    def _out_interval(self, value, begin, end, t):
        row = list(value)
        row.insert(self.heading.names.index(self.during), Interval(begin, end))
        self._out(tuple(row), t)

    def _out(self, body, t):
        """A final result at time ``t``; subscribers get it with the output's bound."""
        if self.keep:
            self.results.append(body)
        if not self.subscribers:
            return
        row = dict(zip(self.heading.names, body))
        bound = t if self.bound is None or self.bound < t else self.bound
        for callback in list(self.subscribers):
            try:
                callback(row, bound)
            except Exception:  # a subscriber that raises must not corrupt the query
                import logging
                logging.getLogger("sira.streams").exception("query subscriber raised")


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
                import logging
                logging.getLogger("sira.streams").exception(
                    "continuous query %s failed and stopped", query.node)

    def finish(self):
        """End of input on every stream: each query's pending results become final."""
        for query in self.queries:
            try:
                query.finish()
            except Exception:
                import logging
                logging.getLogger("sira.streams").exception(
                    "continuous query %s failed and stopped", query.node)


__all__ = ["StreamEngine", "LiveQuery", "NotSupportedLive", "compile_query"]
