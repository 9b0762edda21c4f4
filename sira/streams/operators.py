"""The dataflow operators of continuous queries that carry streams: the base class and its
protocol, sources, row operators, merges, joins with constant relations, relation-to-stream
and the sink. Temporal operators are in :mod:`sira.streams.temporal`; compiling a query into
operators is :mod:`sira.streams.runtime`.
"""

from __future__ import annotations

import abc
from operator import itemgetter

from sortedcontainers import SortedList

from ..algebra.basic import Extend, Project, Restrict
from ..algebra.windows import Changes, DStream, IStream
from ..errors import SiraError
from ..expressions.evaluate import compile_row
from ..intervals import Interval
from .named import NamedStream, detach_failed_subscriber

INFINITY = float("inf")

#: what one train of rows (or one bound) may make an operator emit, in tuples, where one row
#: can make billions (an SPL window over a quiet stretch under a time trigger, a tuple in
#: billions of timeInterval panes or HOP windows): past it the query fails with TooManyTuples,
#: as ``max_tuples`` refuses the batch result, instead of making them all
LIVE_MAX_TUPLES = 50_000_000


class NotSupportedLive(SiraError):
    """The expression has a part the incremental runtime does not run."""

    fields = ("node",)

    def default_message(self):
        return f"{self.node} cannot run on live streams"



class InternalStreamError(SiraError):
    """An operator of a continuous query received input that breaks its invariants (an item
    earlier than a bound it was given, an instant twice, the exit of a tuple that never
    entered). Validated input never causes one: it means a bug, and the query stops."""

    fields = ("operator", "detail")

    def default_message(self):
        return f"internal error in {self.operator}: {self.detail}"


class Operator(abc.ABC):
    """A dataflow operator: receives batches from its inputs and passes batches downstream.

    Three kinds of input, each a method: ``on_rows(rows, port)`` with a train of stream rows
    ``[(t, body), ...]`` in rowtime order; ``on_changes(batch, port)`` with a temporal
    relation's changes ``[(t, [(body, +1 or -1), ...]), ...]``, one entry per instant, in time
    order, netted; ``on_bound(b, port)``: no later input will have a time < b. Rows at t also
    promise that nothing earlier than t follows on that input.

    Every batch passed downstream is checked against what the receiving port was promised: an
    item earlier than a bound given, or an instant seen before, raises
    :class:`InternalStreamError` naming the receiving operator before it changes anything.
    """

    def __init__(self, node, heading):
        self.node = node
        self.heading = heading
        self.downstream: list = []  # (operator, port)
        self.ports: dict = {}  # port -> [bound given, latest time received] (the guard)
        self._fns = None

    def connect(self, op, port=0):
        self.downstream.append((op, port))
        op.ports[port] = [-INFINITY, -INFINITY]

    def emit_rows(self, rows):
        first, last = rows[0][0], rows[-1][0]
        for op, port in self.downstream:
            seen = op.ports[port]
            if first < seen[0] or first < seen[1] or last < first:
                op.refuse(port, first, last, False)
            seen[1] = last
            op.on_rows(rows, port)

    def emit_changes(self, batch):
        first, last = batch[0][0], batch[-1][0]
        for op, port in self.downstream:
            seen = op.ports[port]
            if first < seen[0] or first <= seen[1] or last < first:
                op.refuse(port, first, last, True)
            seen[1] = last
            op.on_changes(batch, port)

    def emit_bound(self, b):
        for op, port in self.downstream:
            seen = op.ports[port]
            if b > seen[0]:
                seen[0] = b
            op.on_bound(b, port)

    def refuse(self, port, first, last, changes) -> None:
        """A batch spanning ``first``..``last`` breaks port ``port``'s promises (an item before
        the bound given or before the latest item, or, for changes, which come once per instant,
        at the latest instant again): raise :class:`InternalStreamError`."""
        bound, latest = self.ports[port]
        what = "changes" if changes else "a row"
        if last < first:
            self.fail(f"{what} at {last} after {what} at {first} in one batch")
        if first < bound:
            self.fail(f"{what} at {first} on input {port}, which was bounded at {bound}")
        self.fail(f"{what} at {first} on input {port} after input at {latest}")

    def fail(self, detail):
        """Raise :class:`InternalStreamError` naming this operator."""
        raise InternalStreamError(operator=self.label(), detail=detail)

    def label(self) -> str:
        text = repr(self.node)
        text = text if len(text) <= 80 else text[:77] + "..."
        return f"{type(self).__name__} {text}"

    def on_rows(self, rows, port):
        self.fail("it takes no stream rows")

    def on_changes(self, batch, port):
        self.fail("it takes no temporal changes")

    @abc.abstractmethod
    def on_bound(self, b, port):
        """Receive a bound on input ``port``."""

    def functions(self):
        """Compiled expressions, built on first use (and again after a restore)."""
        if self._fns is None:
            self._fns = self.compile()
        return self._fns

    def compile(self):
        return ()


def _relation_of(node):
    raise NotSupportedLive(node=f"a relational operand ({node.operator_name}) inside an "
                           f"expression")


def compile_expression(expr, heading):
    """:func:`~sira.expressions.evaluate.compile_row` of ``expr`` over ``heading``, with one
    call less per row for the common shape ``op(attribute or literal, attribute or
    literal)``: the operator's own implementation gets the values straight from the row.

        >>> from sira import INT, Heading
        >>> from sira.expressions.nodes import attr
        >>> gt = compile_expression(attr("v") > 10, Heading.of({"k": INT, "v": INT}))
        >>> gt((1, 11)), gt((1, 10))
        (True, False)
    """
    from ..expressions.evaluate import _SHORT_CIRCUIT, infer_type
    from ..expressions.library import resolve
    from ..expressions.nodes import AttrRef, Call, Literal
    simple = (AttrRef, Literal)
    if not (isinstance(expr, Call) and expr.op not in _SHORT_CIRCUIT
            and 1 <= len(expr.args) <= 2 and all(type(a) in simple for a in expr.args)):
        return compile_row(expr, heading, _relation_of)
    _, impl = resolve(expr.op, tuple(infer_type(a, heading) for a in expr.args))
    where = [(heading.index(a.name), None) if type(a) is AttrRef else (None, a.value)
             for a in expr.args]
    if len(where) == 1:
        (i, c), = where
        return (lambda row: impl(row[i])) if i is not None else compile_row(expr, heading,
                                                                           _relation_of)
    (i, c), (j, d) = where
    if i is not None and j is not None:
        return lambda row: impl(row[i], row[j])
    if i is not None:
        return lambda row: impl(row[i], d)
    if j is not None:
        return lambda row: impl(c, row[j])
    return compile_row(expr, heading, _relation_of)


def inputs_function(exprs, heading, fns):
    """A function from a row to the tuple of the values of ``exprs`` (compiled as ``fns``):
    attributes and literals picked in one C call where every expression is one of those."""
    from ..expressions.nodes import AttrRef, Literal
    if not all(type(e) in (AttrRef, Literal) for e in exprs):
        return lambda row: tuple([f(row) for f in fns])
    constants = tuple(e.value for e in exprs if type(e) is Literal)
    n = heading.degree
    where, c = [], 0
    for e in exprs:
        if type(e) is AttrRef:
            where.append(heading.index(e.name))
        else:
            where.append(n + c)
            c += 1
    if all(i >= n for i in where):
        values = tuple(constants[i - n] for i in where)
        return lambda row: values
    if len(where) == 1:
        (i,) = where
        return lambda row: (row[i],)
    if not constants:
        return itemgetter(*where)
    pick = itemgetter(*where)
    return lambda row: pick(row + constants)


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
        """``(fn, condition)``: ``fn`` maps a row (None: RESTRICT drops it); ``condition`` is
        RESTRICT's test (None for the others)."""
        node, h = self.node, self.src_heading
        if isinstance(node, Restrict):
            cond = compile_expression(node.condition, h)
            return (lambda row: row if cond(row) else None), cond
        if isinstance(node, Extend):
            fns = [compile_expression(e, h) for _, e in node.specs]
            where = {n: i for i, n in enumerate(h.names + tuple(n for n, _ in node.specs))}
            pick = _picker([where[n] for n in self.heading.names])
            if len(fns) == 1:
                (f,) = fns
                return (lambda row: pick(row + (f(row),))), None
            return (lambda row: pick(row + tuple([f(row) for f in fns]))), None
        if isinstance(node, Project):
            return _picker([h.index(n) for n in self.heading.names]), None
        mapping = dict(node.pairs)
        renamed = [mapping.get(n, n) for n in h.names]
        return _picker([renamed.index(n) for n in self.heading.names]), None

    def on_bound(self, b, port):
        self.emit_bound(b)

    def on_rows(self, rows, port):
        fn = self.functions()[0]
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
        fn = self.functions()[0]
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


def complete_instants(op, rows, key) -> list:
    """The rows of ``rows`` (a train) whose instant is complete -- a later row follows -- in
    the order ``key`` gives within an instant, once each; the rows of the train's last instant
    wait in ``op.buffer`` (``op.instant`` their time) for a later row or a bound
    (:func:`flush_instant`). An operator reading a stream in an order that breaks ties within
    an instant (SPL windows, WINDOWBY) feeds on these."""
    buffer, instant = op.buffer, op.instant
    out: list = []
    for t, row in rows:
        if instant is not None and t > instant:
            out.extend(buffer if len(buffer) == 1 else sorted(set(buffer), key=key))
            buffer = []
        instant = t
        buffer.append(row)
    op.buffer, op.instant = buffer, instant
    return out


def flush_instant(op, key) -> list:
    """The rows waiting in ``op.buffer`` (their instant is now complete), in ``key`` order."""
    buffer = op.buffer
    op.buffer, op.instant = [], None
    return buffer if len(buffer) <= 1 else sorted(set(buffer), key=key)


def bound_passed(op, b, key):
    """On a bound ``b``: None when it says nothing new (not past ``op.bound``); otherwise it
    becomes ``op.bound`` and the result is ``(t, rows)``: the rows waiting for their instant
    ``t`` to complete, now complete (``t`` None and no rows when none were waiting)."""
    if op.bound is not None and b <= op.bound:
        return None
    op.bound = b
    if op.instant is not None and op.instant < b:
        t = op.instant
        return t, flush_instant(op, key)
    return None, []


class StreamUngroup(Operator):
    """UNGROUP on a stream: each row becomes one row per combination of the tuples of its
    relation-valued attributes, at the row's instant. As for PROJECT, two rows of one instant
    may give equal rows: ``seen`` keeps those already out at the current instant."""

    def __init__(self, node):
        super().__init__(node, node.heading)
        self.src_heading = node.source.heading
        self.instant = None
        self.seen: set = set()

    def compile(self):
        node, h = self.node, self.src_heading
        keep = [i for i, n in enumerate(h.names) if n not in node.names]
        names = [h.names[i] for i in keep]
        for rva in node.names:
            names += list(h.type_of(rva).heading.names)
        return (row_getter_tuple(keep), [h.index(n) for n in node.names],
                _reorder([names.index(n) for n in node.heading.names]))

    def on_bound(self, b, port):
        self.emit_bound(b)

    def on_rows(self, rows, port):
        from itertools import product
        flat, rvas, order = self.functions()
        out = []
        for t, row in rows:
            if t != self.instant:
                self.instant, self.seen = t, set()
            base = flat(row)
            for subs in product(*(row[p].body for p in rvas)):
                value = base + sum(subs, ())
                if order is not None:
                    value = order(value)
                if value not in self.seen:
                    self.seen.add(value)
                    out.append((t, value))
        if out:
            self.emit_rows(out)


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
        self.fail("a source has no input")


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


class _Keyed:
    """A set of tuples indexed by the values at some positions (a join's current contents)."""

    def __init__(self, positions):
        self.positions = list(positions)
        self.index: dict = {}  # key -> set of tuples

    def key(self, row):
        return tuple([row[i] for i in self.positions])

    def change(self, row, delta):
        """Add (delta > 0) or remove a tuple; False when removing one that is not there."""
        k = self.key(row)
        if delta > 0:
            self.index.setdefault(k, set()).add(row)
            return True
        members = self.index.get(k)
        if members is None or row not in members:
            return False
        members.discard(row)
        if not members:
            del self.index[k]
        return True

    def rows(self):
        """Every tuple held (in no particular order)."""
        return [row for members in self.index.values() for row in members]

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


def _same(row):
    return row


def _picker(positions):
    """A function picking the values at ``positions`` of a tuple, as a tuple."""
    if not positions:
        return lambda row: ()
    if len(positions) == 1:
        (i,) = positions
        return lambda row: (row[i],)
    return itemgetter(*positions)


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
        """``(order, keep)``: the output's attribute order (None: as built) and the changes
        kept (1: entries, ISTREAM; -1: exits, DSTREAM; None: both, CHANGES)."""
        names = list(self.src_heading.names)
        if isinstance(self.node, Changes):
            where = {n: i for i, n in enumerate(names + [self.node.at, "kind"])}
        else:
            where = {n: i for i, n in enumerate(names + [self.node.at])}
        keep = {IStream: 1, DStream: -1}.get(type(self.node))
        return _reorder([where[n] for n in self.heading.names]), keep

    def on_bound(self, b, port):
        self.emit_bound(b)

    def on_changes(self, batch, port):
        rows = self.rows_of(batch)
        if rows:
            self.emit_rows(rows)

    def rows_of(self, batch) -> list:
        """The stream rows ``(t, row)`` of a batch of changes."""
        order, keep = self.functions()
        order = order or _same
        rows = []
        append = rows.append
        for t, changes in batch:
            if keep is None:  # CHANGES: each change, with its instant and kind
                entered, left = (t, "+"), (t, "-")
                for row, delta in changes:
                    append((t, order(row + (entered if delta > 0 else left))))
            else:
                at = (t,)
                for row, delta in changes:
                    if delta == keep:
                        append((t, order(row + at)))
        return rows


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
        self.subscriber_errors: list = []  # (callback, exception) of subscribers that raised
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
                    if value in self.open:
                        self.fail(f"{value} enters at {t} while it holds since "
                                  f"{self.open[value]}")
                    self.open[value] = t
                else:
                    begin = self.open.pop(value, None)
                    if begin is None or not begin < t:
                        self.fail(f"{value} leaves at {t} but did not hold before "
                                  f"(since {begin})")
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
            except Exception as err:  # a subscriber that raises must not corrupt the query
                detach_failed_subscriber(self.subscribers, self.subscriber_errors, callback,
                                         err, f"query {self.node!r}")
