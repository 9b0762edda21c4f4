"""The dataflow operators of continuous queries that carry temporal relations (a window's
output, as changes per instant): windows, pointwise set operators and joins, and pointwise
SUMMARIZEBY with running aggregates.
"""

from __future__ import annotations

import abc
from collections import deque

from sortedcontainers import SortedDict, SortedList

from ..algebra.aggregation import aggregations
from ..expressions.library import float_total, fold, scaled_float
from ..expressions.nodes import AttrRef
from ..types import FLOAT, INTEGER_TYPES
from ..expressions.evaluate import compile_row
from .operators import (INFINITY, Operator, _JoinShape, _Keyed, _relation_of, _reorder,
                        _static_keyed, inputs_function, row_getter_tuple)


def _buffer(buffer: deque, rows) -> None:
    """Add a train of rows (in time order) to ``buffer``: ``[t, [rows]]`` per instant."""
    for t, row in rows:
        if buffer and buffer[-1][0] == t:
            buffer[-1][1].append(row)
        else:
            buffer.append([t, [row]])


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
        _buffer(self.buffer, rows)

    def on_bound(self, b, port):
        if self.bound is not None and b <= self.bound:
            return
        out = self.close(b)
        if out:
            self.emit_changes(out)
        self.emit_bound(b)

    def close(self, b) -> list:
        """Move the bound to ``b`` (later than the current one): the changes of every instant
        before ``b``, one entry per instant (what :meth:`on_bound` passes on)."""
        self.bound = b
        closed = []
        buffer = self.buffer
        while buffer and buffer[0][0] < b:
            closed.append(buffer.popleft())
        if self.fifo:
            return self._fifo(closed, b)
        part_of, order, time, on = self.functions()
        for t, rows in closed:
            rows.sort(key=order)
            for row in rows:
                self._arrive(part_of(row), t, row, time, on)
        return self._release(b)

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
        self.left_heading, self.right_heading = left_heading, right_heading
        self.static = static is not None  # the right operand is a constant relation
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
            self._change(left, row, delta, "left")
        for row, delta in dr:
            for match in left.matching(right.key(row)):
                value = combine(match, row)
                net[value] = net.get(value, 0) + delta
            self._change(right, row, delta, "right")
        return [(value, d) for value, d in net.items() if d]

    def _change(self, side, row, delta, name):
        if not side.change(row, delta):
            self.fail(f"{row} leaves the {name} operand, which does not hold it")

    def _semi(self, dl, dr):
        left, right = self.left, self.right
        keys = {left.key(row) for row, _ in dl} | {right.key(row) for row, _ in dr}
        wanted = self.kind == "semijoin"
        before = {k: set(left.matching(k)) if bool(right.matching(k)) == wanted else set()
                  for k in keys}
        for row, delta in dl:
            self._change(left, row, delta, "left")
        for row, delta in dr:
            self._change(right, row, delta, "right")
        out = []
        for k in keys:
            after = set(left.matching(k)) if bool(right.matching(k)) == wanted else set()
            out.extend((row, -1) for row in before[k] - after)
            out.extend((row, 1) for row in after - before[k])
        return out


class _Running:
    """An aggregate maintained as tuples come and go (exact operators and FLOAT sums);
    ``of(agg)`` picks the kind: an integer sum, a FLOAT sum kept exactly, a max/min over a
    sorted list, or an and/or counting trues."""

    @staticmethod
    def supports(agg) -> bool:
        return (agg.name == "plus" and agg.result_type in INTEGER_TYPES + (FLOAT,)) or (
            agg.exact and agg.name in ("max", "min", "and", "or"))

    @staticmethod
    def of(agg):
        if not _Running.supports(agg):
            return None
        if agg.name == "plus" and agg.result_type == FLOAT:
            return _RunningFloatSum()
        if agg.name == "plus":
            return _RunningSum(agg.result_type)
        if agg.name in ("max", "min"):
            return _RunningExtreme(agg.name == "max")
        return _RunningLogic(agg.name == "and")


class _RunningSum:
    """An integer sum; its value is checked against the result type (IntOverflow)."""

    __slots__ = ("result_type", "total", "low", "high")

    def __init__(self, result_type):
        self.result_type = result_type  # (the Aggregation itself holds closures)
        self.total = 0
        bits = result_type.bits
        self.low = -INFINITY if bits is None else -(2 ** (bits - 1))
        self.high = INFINITY if bits is None else 2 ** (bits - 1) - 1

    def change(self, value, delta):
        self.total += value if delta > 0 else -value

    def value(self):
        total = self.total
        if self.low <= total <= self.high:
            return total
        return self.result_type.fit(total, operator="plus")


class _RunningFloatSum:
    """A FLOAT sum: the exact sum of its finite values (as an integer, ``scaled_float``) and its
    counts of infinities, rounded once when asked (``float_total``): ``float_sum``'s bits."""

    __slots__ = ("total", "positive", "negative")

    def __init__(self):
        self.total = self.positive = self.negative = 0

    def change(self, value, delta):
        if value - value == 0.0:
            self.total += scaled_float(value) if delta > 0 else -scaled_float(value)
        elif value > 0:
            self.positive += delta
        else:
            self.negative += delta

    def value(self):
        return float_total(self.total, self.positive, self.negative)


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

    Integer and FLOAT sums, counts, max, min, and/or are maintained as tuples come and go
    (FLOAT sums exactly, rounded when shown); inexact aggregates (FLOAT products, AVERAGE...)
    are folded again from the group's current tuples in the
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
                folds, inputs_function([e for _, _, e in node.specs], h, fns))

    def on_bound(self, b, port):
        self.emit_bound(b)

    def on_changes(self, batch, port):
        key_of, aggs, fns, order, folds = self.functions()[:5]
        groups, values = self.groups, self.values
        out = []
        for t, changes in batch:
            touched = {}  # key -> its output tuple before this instant
            for row, delta in changes:
                k = key_of(row)
                group = groups.get(k)
                if group is None:
                    if delta < 0:
                        self.fail(f"{row} leaves group {k}, which holds nothing")
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
        """The summary's functions (``key_of, aggs, fns, order, folds, inputs_of``), then
        ``until`` (``until(t)`` is the instant an element arriving at ``t`` leaves; None:
        never), ``single_sum`` (the only aggregate is an integer sum), and for that case
        ``key_at`` (the position of the only group attribute; None if there are several or
        none), ``value_at`` (the position of the attribute summed; None for an expression),
        ``step`` (the window's length when ``until`` is an integer addition) and ``limits``
        (the sum's result range).

        When the only aggregate is an integer sum (the usual live query), the state is kept
        compact: a group's key is its attribute's value itself when it has one attribute, a
        group is ``[size, sum]`` and an exit holds the element's input value rather than a
        tuple of one (:meth:`general_state` and :meth:`load_general_state` convert, for
        checkpoints).
        """
        from ..engine.windows import _Time
        base = super().compile()
        aggs = base[1]
        units = 1 if self.window.spec.kind == "now" else self.window.range_units
        time = _Time(self.window.ts_type)
        if units is None:
            until = None
        elif time.timestamp:
            def until(t):
                return time.plus(t, units)
        else:
            def until(t):
                return t + units
        single_sum = len(aggs) == 1 and isinstance(_Running.of(aggs[0]), _RunningSum)
        node = self.node
        key_names = [n for n in node.by if n not in node.using]
        key_at = self.src_heading.index(key_names[0]) if single_sum and len(key_names) == 1 \
            else None
        expr = node.specs[0][2]
        value_at = self.src_heading.index(expr.name) if single_sum and \
            isinstance(expr, AttrRef) else None
        step = units if units is not None and not time.timestamp else None
        limits = None
        if single_sum:
            running = _Running.of(aggs[0])
            limits = (running.low, running.high)
        return base + (until, single_sum, key_at, value_at, step, limits)

    def general_state(self) -> tuple:
        """``(groups, values, exits)`` in the general layout, whatever the state's: keys as
        tuples, a group as ``[None, size, [running aggregate]]``, an exit's inputs as a tuple
        (checkpoints are written in this form, so they do not depend on it).

            >>> import sira
            >>> from sira.streams import StreamEngine
            >>> engine = StreamEngine()
            >>> s = engine.create_stream("s", {"k": sira.INT, "v": sira.INT})
            >>> q = engine.register("summarizebyusing(window(s, ts, range(5)), (k, during), "
            ...                     "(total(plus(v))), (during))")
            >>> s.attach().insert_many([({"k": 1, "v": 2}, 1), ({"k": 1, "v": 3}, 2)])
            >>> window_summary = q.sources["s"][0].downstream[0][0]
            >>> window_summary.groups, window_summary.exits
            ({1: [1, 2]}, deque([(6, 1, 2)]))
            >>> groups, values, exits = window_summary.general_state()
            >>> [(k, g[1], g[2][0].total) for k, g in groups.items()], values, exits
            ([((1,), 1, 2)], {(1,): (1, 2)}, [(6, (1,), (2,))])
        """
        fns = self.functions()
        if not fns[7]:
            return self.groups, self.values, list(self.exits)
        tupled = (lambda k: (k,)) if fns[8] is not None else (lambda k: k)
        groups = {}
        for k, (size, total) in self.groups.items():
            running = _Running.of(fns[1][0])
            running.total = total
            groups[tupled(k)] = [None, size, [running]]
        return (groups, {tupled(k): v for k, v in self.values.items()},
                [(t, tupled(k), (v,)) for t, k, v in self.exits])

    def load_general_state(self, groups: dict, values: dict, exits: list) -> None:
        """Set the state from :meth:`general_state`'s layout (a checkpoint's)."""
        fns = self.functions()
        if not fns[7]:
            self.groups, self.values, self.exits = groups, values, deque(exits)
            return
        untupled = (lambda k: k[0]) if fns[8] is not None else (lambda k: k)
        self.groups = {untupled(k): [size, running[0].total]
                       for k, (_, size, running) in groups.items()}
        self.values = {untupled(k): v for k, v in values.items()}
        self.exits = deque((t, untupled(k), inputs[0]) for t, k, inputs in exits)

    def on_rows(self, rows, port):
        _buffer(self.buffer, rows)

    def on_changes(self, batch, port):
        self.fail("a fused window takes stream rows")

    def on_bound(self, b, port):
        if self.bound is not None and b <= self.bound:
            return
        out = self.close(b)
        if out:
            self.emit_changes(out)
        self.emit_bound(b)

    def close(self, b) -> list:
        """Move the bound to ``b`` (later than the current one): the output changes of every
        instant before ``b``, one entry per instant (what :meth:`on_bound` passes on).

        Per instant: the elements arriving join their groups (each once: set semantics), the
        elements whose time is up leave, and the groups touched give their changes.
        """
        fns = self.functions()
        if fns[7]:
            return self._close_sum(b, fns)
        self.bound = b
        key_of, aggs, _, _, _, inputs_of, until = fns[:7]
        buffer, exits, groups, values = self.buffer, self.exits, self.groups, self.values
        out = []
        while buffer and buffer[0][0] < b:
            t, rows = buffer.popleft()
            if exits and exits[0][0] < t:
                self._leave_before(t, out)
            if len(rows) > 1:
                rows = list(dict.fromkeys(rows))
            touched: dict = {}
            leaves = None if until is None else until(t)
            for row in rows:
                k = key_of(row)
                inputs = inputs_of(row)
                group = groups.get(k)
                if group is None:
                    group = groups[k] = [None, 0, [_Running.of(a) for a in aggs]]
                if k not in touched:
                    touched[k] = values.get(k)
                group[1] += 1
                for r, v in zip(group[2], inputs):
                    r.change(v, 1)
                if leaves is not None:
                    exits.append((leaves, k, inputs))
            if exits and exits[0][0] == t:
                self._leave_at(t, touched)
            emitted = self._outputs(touched)
            if emitted:
                out.append((t, emitted))
        if exits and exits[0][0] < b:
            self._leave_before(b, out)
        return out

    def _close_sum(self, b, fns) -> list:
        """:meth:`close` when the only aggregate is an integer sum, on the compact state (see
        :meth:`compile`): the same instants, steps and order, inline (the hot loop of the
        usual live query). An instant's arrivals come first, then its exits, then the changes
        of the groups they touched. ``fns``: :meth:`functions`."""
        self.bound = b
        key_of, aggs, exprs, order, _, _, until, _, key_at, value_at, step, _ = fns
        value_of, result_type = exprs[0], aggs[0].result_type
        low, high = fns[11]
        buffer, exits, groups, values = self.buffer, self.exits, self.groups, self.values
        out = []
        while True:
            if buffer and buffer[0][0] < b:
                t = buffer[0][0]
                if exits and exits[0][0] < t:  # an instant with exits only comes first
                    t, rows = exits[0][0], ()
                else:
                    rows = buffer.popleft()[1]
                    if len(rows) > 1:
                        rows = list(dict.fromkeys(rows))
            elif exits and exits[0][0] < b:
                t, rows = exits[0][0], ()
            else:
                return out
            touched: dict = {}
            if rows:  # arrivals
                leaves = t + step if step is not None else None if until is None else until(t)
                for row in rows:
                    k = row[key_at] if key_at is not None else key_of(row)
                    v = row[value_at] if value_at is not None else value_of(row)
                    group = groups.get(k)
                    if group is None:
                        group = groups[k] = [0, 0]
                    if k not in touched:
                        touched[k] = values.get(k)
                    group[0] += 1
                    group[1] += v
                    if leaves is not None:
                        exits.append((leaves, k, v))
            while exits and exits[0][0] == t:  # exits
                _, k, v = exits.popleft()
                group = groups[k]
                if k not in touched:
                    touched[k] = values.get(k)
                group[0] -= 1
                group[1] -= v
            emitted = []
            for k, old in touched.items():  # the groups' changes
                size, total = groups[k]
                if size:
                    if not low <= total <= high:
                        result_type.fit(total, operator="plus")  # IntOverflow
                    new = (k, total) if key_at is not None else k + (total,)
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
            if emitted:
                out.append((t, emitted))

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
