"""SQL++ WindowBy windows (seed 003) on live streams, as one dataflow operator.

A live WINDOWBY's sequence is its partition's rows in rowtime order: ``order(...)`` must start
with the stream's rowtime (further order attributes and then the canonical order break ties
within an instant, as in batch). The rows of an instant are held until the instant is
complete (a later row, or a bound past it) and then appended to their partitions' sequences.

Each position is decided once: when the next row of its partition has arrived if some clause
declares a NEXT variable (its value, or its absence, must be known), at once otherwise, and at
the end of input (``finish()``) for the last one. Deciding position q, in the order of
:func:`sira.engine.windowby.find_windows`:

* starts: a SLIDING window opens at q if START holds there; a TUMBLING window only while none
  is open (a window that never closes ends the search, as in batch); ``start(unbounded)`` opens
  one window at position 1. With LABEL, a window per position where LABEL holds, whose start
  is START's first position (shared by every label, found once, when START reads no label
  variable), the one candidate when START pins it to the label (``lp - sp = 1``), or the first
  position where START holds searched from the sequence's first; a label whose START has not
  held yet waits, and one whose START never holds starts at position 1 with ``opened`` false;
* ends: a window closes at the first position at or after its start where END holds. An END
  pinned to another position (``ep - sp = 3``) is tested at that position only; an END reading
  no label or start variable is evaluated once per position for every open window; any other
  END is tested for each open window at each position.

A window is emitted as soon as it closes, with its variables, ``closed``/``opened`` and its
tuples (or its pushed-down aggregates); a window still open at the end of input is emitted by
``finish()`` with ``closed`` false (dropped with ONLY), bound to the sequence's last tuple, as
in batch. Results are never retracted. A partition keeps its rows from the earliest position
a window may still need: the open windows' starts (and labels). With LABEL every window reaches
back to a START found from the sequence's first position (its first tuple when START has not
held), so the rows from that START on are kept: they are every later label window's tuples.
Without ``aggregates`` they are in the output anyway; with them, a label window's aggregates
are folded over its rows when it closes.

The output has no attribute holding an instant: its rows travel with the time at which they
became final. A PROJECT after it that keeps what tells windows apart (the partition attributes
and the start's AT or AS variable, the label's with LABEL) runs as on any stream; one that
drops it may map windows closing at different instants to one row, and remembers the rows it
has let out (:class:`WindowProject`).

    >>> import sira
    >>> from sira.streams import StreamEngine
    >>> engine = StreamEngine()
    >>> s = engine.create_stream("s", {"v": sira.INT})
    >>> q = engine.register("windowby(s, order(ts) tumbling, start(as(a) at(sp) "
    ...                     "when(eq(a.v, 0))), end(as(b) at(ep) when(eq(b.v, 9))), "
    ...                     "aggregates(n(count(w))))")
    >>> p = s.attach()
    >>> p.insert_many([({"v": 0}, 1), ({"v": 5}, 2), ({"v": 9}, 3), ({"v": 0}, 4)])
    >>> [(r["sp"], r["ep"], r["n"], r["closed"]) for r in q.results()]
    [(1, 3, 3, True)]
"""

from __future__ import annotations

from bisect import bisect_left

from ..algebra.basic import Extend, Restrict
from ..algebra.nesting import Ungroup
from ..algebra.windowby import WindowBy
from ..engine.windowby import _Condition, _aggregate_fn, _pin, _reads_roles, sequence_key
from ..values import Relation, Tuple
from .operators import (INFINITY, NotSupportedLive, Operator, RowMap, _relation_of,
                        bound_passed, complete_instants, row_getter_tuple)


def build_windowby(node, build, streams, rowtime_of_source):
    """The operator computing ``node`` (a WINDOWBY) on its source stream, already built by
    ``build``; NotSupportedLive for what cannot run."""
    src, kind = build(node.source)
    if kind != "stream":
        raise NotSupportedLive(node="WINDOWBY of something not a stream")
    rowtime = rowtime_of_source(node.source, streams)
    if node.order[0] != rowtime:
        raise NotSupportedLive(node=f"a WINDOWBY ordered by '{node.order[0]}', which is not "
                               f"the rowtime of its stream ('{rowtime}'): a live sequence is "
                               f"in rowtime order")
    op = WindowByRows(node)
    src.connect(op)
    return op


def window_keys(node) -> list:
    """The sets of attributes each telling apart the windows of a WINDOWBY below ``node``
    (through RESTRICT, EXTEND and UNGROUP, which keep its attributes): the partition
    attributes and the AT or the AS variable of the start (of the label with LABEL); empty
    when ``node`` is not such a WINDOWBY or neither variable is declared."""
    while isinstance(node, (Restrict, Extend, Ungroup)):
        node = node.source
    if not isinstance(node, WindowBy):
        return []
    if node.start.unbounded and node.label is None:
        return [tuple(node.partition)]
    role = "label" if node.label is not None else "start"
    return [tuple(node.partition) + (n,) for k, n in node.variables(role) if k in ("at", "as")]


def window_key(node) -> tuple | None:
    """The first of :func:`window_keys`, or None."""
    keys = window_keys(node)
    return keys[0] if keys else None


def project_keeps_windows(project) -> bool:
    """Whether a PROJECT of a live WINDOWBY's output keeps its windows apart."""
    return any(set(key) <= set(project.names) for key in window_keys(project.source))


def projects_windows(project) -> bool:
    """Whether ``project`` is a PROJECT of a live WINDOWBY's output (through RESTRICT, EXTEND
    and UNGROUP) that may merge windows: :class:`WindowProject` runs it."""
    node = project.source
    while isinstance(node, (Restrict, Extend, Ungroup)):
        node = node.source
    return isinstance(node, WindowBy) and not project_keeps_windows(project)


class WindowProject(RowMap):
    """PROJECT of a live WINDOWBY's windows that drops what tells them apart: windows closing
    at different instants may give equal rows, and the output has no instant attribute to
    keep them apart, so the values already out are remembered for as long as the query runs
    (its memory grows with its distinct results; keeping the partition attributes and the
    start's AT or AS variable avoids it)."""

    def on_rows(self, rows, port):
        fn = self.functions()[0]
        seen = self.seen
        out = []
        for t, row in rows:
            value = fn(row)
            if value is None or value in seen:
                continue
            seen.add(value)
            out.append((t, value))
        if out:
            self.emit_rows(out)


class _Plan:
    """What the operator compiles once: the conditions and how each clause is searched."""

    def __init__(self, node):
        h = node.source.heading
        self.heading = h
        self.cond = {w: _Condition(node, w, _relation_of) for w in ("label", "start", "end")}
        self.lookahead = 1 if any(k == "next" for k, _ in node.variables()) else 0
        self.label = node.label is not None
        self.start_unbounded = node.start.unbounded
        self.end_unbounded = node.end.unbounded
        self.end_pin = None if node.end.unbounded else _pin(node, "end", ("label", "start"))
        searched = self.label and not node.start.unbounded
        self.start_pin = _pin(node, "start", ("label",)) if searched else None
        self.shared = searched and self.start_pin is None and \
            not _reads_roles(node, "start", ("label",))
        self.independent_end = not node.end.unbounded and self.end_pin is None and \
            not _reads_roles(node, "end", ("label", "start"))
        self.tumbling = node.kind == "tumbling" and not self.label
        self.only = node.only
        self.aggs = [(name, _aggregate_fn(e, h, node.result)) for name, e in node.aggregates]
        self.part = row_getter_tuple([h.index(n) for n in node.partition])
        self.key = sequence_key(h, node)
        self.names = node.heading.names
        self.variables = {role: node.variables(role) for role in ("label", "start", "end")}
        self.partition = node.partition
        self.result = node.result


class _Sequence:
    """One partition's sequence as it grows, and its windows still to be emitted.

    Rows are at positions ``base + 1`` .. ``base + len(rows)``; ``done`` positions are
    decided. A window is ``[label position or None, start, opened]``.
    """

    __slots__ = ("heading", "rows", "tuples", "base", "done", "kept", "shared", "waiting", "start_at",
                 "end_at", "scanning", "following", "hits", "to_end", "state")

    def __init__(self, heading):
        self.heading = heading
        self.rows: list = []
        self.tuples: list = []  # each row's Tuple once a condition or a result reads it
        self.base = 0
        self.done = 0
        self.kept = 64  # trim when the rows double past this
        self.shared = 0  # LABEL, START shared by every label: its first position (0: not yet)
        self.waiting: list = []  # LABEL positions whose START has not held yet
        self.start_at: dict = {}  # pinned START: position -> [label positions]
        self.end_at: dict = {}  # pinned END: position -> [windows]
        self.scanning: list = []  # windows testing END at each position
        self.following: list = []  # windows closing where an END reading no start next holds
        self.hits: list = []  # positions where such an END held
        self.to_end: list = []  # (window, closed): running to the end of the sequence
        self.state = 0  # TUMBLING: 0 searching, 1 a window open, 2 no more windows

    @property
    def m(self) -> int:
        return self.base + len(self.rows)

    def row(self, p):
        return self.rows[p - 1 - self.base]

    def append(self, row) -> None:
        self.rows.append(row)
        self.tuples.append(None)

    def tuple_at(self, p):
        i = p - 1 - self.base
        t = self.tuples[i]
        if t is None:
            t = self.tuples[i] = Tuple(self.heading, self.rows[i])
        return t

    def value(self, kind, p, in_condition):
        """The value of a variable bound at position p, as ``_Sequence.value`` in batch."""
        if p is None:
            return None
        if kind == "at":
            return p
        if kind == "as":
            return self.tuple_at(p)
        q = p - 1 if kind == "prev" else p + 1
        exists = 1 <= q <= self.base + len(self.rows)
        if in_condition:
            return self.tuple_at(q) if exists else None
        return Relation(self.heading, frozenset({self.row(q)} if exists else ()))


class WindowByRows(Operator):
    """WINDOWBY on a stream (see the module docstring).

    ``parts`` maps a partition key to its :class:`_Sequence`; ``buffer`` holds the rows of the
    latest instant (``instant``) not yet appended; ``clock`` is the latest time seen.
    """

    def __init__(self, node: WindowBy):
        super().__init__(node, node.heading)
        self.src_heading = node.source.heading
        self.parts: dict = {}
        self.buffer: list = []
        self.instant = None
        self.bound = None
        self.clock = None

    def compile(self):
        return _Plan(self.node)

    # ------------------------------------------------------------------ input
    def on_rows(self, rows, port):
        out: list = []
        before = self.instant
        done = complete_instants(self, rows, self.functions().key)
        if done:
            # the latest complete instant (windows closing now leave with it)
            now = self.instant
            t = next((r[0] for r in reversed(rows) if r[0] < now), before)
            self._append(done, t, out)
        if out:
            self.emit_rows(out)

    def on_bound(self, b, port):
        passed = bound_passed(self, b, self.functions().key)
        if passed is None:
            return
        out: list = []
        if passed[0] is not None:
            self._append(passed[1], passed[0], out)
        if b != INFINITY:
            self.clock = b if self.clock is None or b > self.clock else self.clock
        else:
            t = self.clock if self.clock is not None else 0
            for seq in self.parts.values():
                self._advance(seq, t, out, ended=True)
                self._finish(seq, t, out)
            self.parts = {}
        if out:
            self.emit_rows(out)
        self.emit_bound(b if self.instant is None else min(b, self.instant))

    def _append(self, rows, t, out) -> None:
        """Append rows of complete instants (in sequence order) to their partitions and decide
        the positions that became decidable; windows closing now leave at ``t``."""
        plan = self.functions()
        self.clock = t if self.clock is None or t > self.clock else self.clock
        part = plan.part
        parts = self.parts
        touched = {}
        for row in rows:
            k = part(row)
            seq = parts.get(k)
            if seq is None:
                seq = parts[k] = _Sequence(plan.heading)
            seq.append(row)
            touched[k] = seq
        for seq in touched.values():
            self._advance(seq, t, out)

    # ------------------------------------------------------------------ deciding positions
    def _advance(self, seq, t, out, ended=False) -> None:
        plan = self.functions()
        last = seq.m if ended else seq.m - plan.lookahead
        while seq.done < last:
            seq.done += 1
            self._decide(seq, seq.done, t, out)
        if len(seq.rows) >= 2 * seq.kept and (
                not plan.label or plan.shared and seq.shared and not seq.waiting):
            self._trim(seq)

    def _decide(self, seq, q, t, out) -> None:
        plan = self.functions()
        start = plan.cond["start"]
        new = []
        if plan.label:
            if plan.shared and not seq.shared and start(seq, {"label": 1, "start": q}):
                seq.shared = q
                new.extend([lp, q, True] for lp in seq.waiting)
                seq.waiting = []
            elif not plan.shared and seq.waiting:  # searched: every waiting label tests q
                still = []
                for lp in seq.waiting:
                    if start(seq, {"label": lp, "start": q}):
                        new.append([lp, q, True])
                    else:
                        still.append(lp)
                seq.waiting = still
            for lp in seq.start_at.pop(q, ()):
                opened = start(seq, {"label": lp, "start": q})
                new.append([lp, q if opened else 1, opened])
            if plan.cond["label"](seq, {"label": q}):
                self._label_window(seq, q, new)
        elif plan.start_unbounded:
            if q == 1:
                new.append([None, 1, True])
        elif plan.tumbling:
            if seq.state == 0 and start(seq, {"start": q}):
                seq.state = 1
                new.append([None, q, True])
        elif start(seq, {"start": q}):
            new.append([None, q, True])
        self._ends_at(seq, q, t, out)
        for w in new:
            self._begin(seq, w, q, t, out)

    def _label_window(self, seq, lp, new) -> None:
        plan = self.functions()
        start = plan.cond["start"]
        if plan.start_unbounded:
            new.append([lp, 1, True])
        elif plan.shared:
            if seq.shared:
                new.append([lp, seq.shared, True])
            else:
                seq.waiting.append(lp)
        elif plan.start_pin is not None:
            p = lp + plan.start_pin[1]
            if p < 1:
                new.append([lp, 1, False])
            elif p <= lp:
                opened = start(seq, {"label": lp, "start": p})
                new.append([lp, p if opened else 1, opened])
            else:
                seq.start_at.setdefault(p, []).append(lp)
        else:
            found = next((p for p in range(1, lp + 1) if start(seq, {"label": lp, "start": p})),
                         None)
            if found is not None:
                new.append([lp, found, True])
            else:
                seq.waiting.append(lp)

    def _ends_at(self, seq, q, t, out) -> None:
        """Test END at position q for the windows waiting for it."""
        plan = self.functions()
        end = plan.cond["end"]
        for w in seq.end_at.pop(q, ()):
            if end(seq, self._positions(w, q)):
                self._close(seq, w, q, True, t, out)
            else:
                self._unclosed(seq, w)
        if plan.independent_end and end(seq, {"label": None, "start": None, "end": q}):
            seq.hits.append(q)
            following, seq.following = seq.following, []
            for w in following:
                self._close(seq, w, q, True, t, out)
        if seq.scanning:
            still = []
            for w in seq.scanning:
                if end(seq, self._positions(w, q)):
                    self._close(seq, w, q, True, t, out)
                else:
                    still.append(w)
            seq.scanning = still

    def _begin(self, seq, w, q, t, out) -> None:
        """A window whose start is known (at or before q, the last position decided) looks
        for its END."""
        plan = self.functions()
        lp, s, opened = w
        if plan.end_unbounded:
            seq.to_end.append((w, True))
            return
        positions = self._positions(w, None)
        pin = plan.end_pin
        if pin is not None and positions[pin[0]] is not None:
            target = positions[pin[0]] + pin[1]
            if target < s:
                self._unclosed(seq, w)
            elif target <= q:
                positions["end"] = target
                if plan.cond["end"](seq, positions):
                    self._close(seq, w, target, True, t, out)
                else:
                    self._unclosed(seq, w)
            else:
                seq.end_at.setdefault(target, []).append(w)
            return
        if plan.independent_end:
            i = bisect_left(seq.hits, s)
            if i < len(seq.hits):
                self._close(seq, w, seq.hits[i], True, t, out)
            else:
                seq.following.append(w)
            return
        end = plan.cond["end"]
        for p in range(s, q + 1):
            positions["end"] = p
            if end(seq, positions):
                self._close(seq, w, p, True, t, out)
                return
        seq.scanning.append(w)

    @staticmethod
    def _positions(w, q) -> dict:
        lp, s, opened = w
        return {"label": lp, "start": s if opened else None, "end": q}

    def _unclosed(self, seq, w) -> None:
        """END will never hold for this window: it runs to the end of the sequence."""
        plan = self.functions()
        if plan.tumbling:
            seq.state = 2
        if not plan.only:
            seq.to_end.append((w, False))

    def _finish(self, seq, t, out) -> None:
        """The end of input: every window still waiting is decided."""
        n = seq.m
        new = [[lp, 1, False] for lp in seq.waiting]
        new += [[lp, 1, False] for p in sorted(seq.start_at) for lp in seq.start_at[p]]
        seq.waiting, seq.start_at = [], {}
        for w in new:
            self._begin(seq, w, n, t, out)
        for p in sorted(seq.end_at):
            for w in seq.end_at[p]:
                self._unclosed(seq, w)
        for w in seq.scanning + seq.following:
            self._unclosed(seq, w)
        seq.end_at, seq.scanning, seq.following = {}, [], []
        for w, closed in seq.to_end:
            self._close(seq, w, n, closed, t, out)
        seq.to_end = []

    def _close(self, seq, w, e, closed, t, out) -> None:
        """Emit the window [start, e]."""
        plan = self.functions()
        lp, s, opened = w
        if plan.tumbling and closed:
            seq.state = 0
        first = seq.row(s)
        h = plan.heading
        values = {n: first[h.index(n)] for n in plan.partition}
        for role, p in (("label", lp), ("start", s), ("end", e)):
            for kind, name in plan.variables[role]:
                values[name] = seq.value(kind, p, False)
        values["closed"] = closed
        if plan.label:
            values["opened"] = opened
        window = seq.rows[s - 1 - seq.base:e - seq.base]
        if plan.aggs:
            for name, fn in plan.aggs:
                values[name] = fn(window)
        else:
            values[plan.result] = Relation(h, frozenset(window))
        out.append((t, tuple(values[n] for n in plan.names)))

    def _trim(self, seq) -> None:
        """Drop the rows no window can need any more (before the earliest start, less one
        for its PREV)."""
        windows = seq.scanning + seq.following + [w for w, _ in seq.to_end]
        windows += [w for ws in seq.end_at.values() for w in ws]
        starts = [min(w[1], w[0] or w[1]) for w in windows]  # a label may come before its start
        if seq.shared:
            starts.append(seq.shared)  # every later label window starts there
        low = min(starts, default=seq.done + 1)
        low = min(low, seq.done + 1)
        cut = low - 2 - seq.base  # keep position low - 1
        if cut > 0:
            del seq.rows[:cut]
            del seq.tuples[:cut]
            seq.base += cut
            seq.hits = seq.hits[bisect_left(seq.hits, low):]
        seq.kept = max(64, len(seq.rows))

    def pending(self):
        """The earliest instant a bound must pass to let something out (None: nothing held)."""
        return self.instant


# ------------------------------------------------------------------------------ checkpoints

def _register_checkpoint_codecs() -> None:
    """Teach the data-only checkpoint format (:mod:`sira.streams.checkpoint`) this operator's
    state: each partition's retained rows and its windows as positions."""
    from . import checkpoint as ck

    def window(obj):
        ck._expect(isinstance(obj, list) and len(obj) == 3 and (obj[0] is None or type(obj[0])
                   is int) and type(obj[1]) is int and type(obj[2]) is bool,
                   "a window is [label position or null, start, opened]")
        return list(obj)

    def positions(obj, what):
        ck._expect(isinstance(obj, list) and all(type(p) is int for p in obj),
                   f"{what} must be a list of positions")
        return list(obj)

    def enc(op):
        h = op.src_heading
        rows = ck._Rows(h)
        keys = ck._Rows([h.type_of(n) for n in op.node.partition])
        parts = []
        for k, s in op.parts.items():
            parts.append({
                "key": keys.enc(k), "rows": rows.enc_all(s.rows), "base": s.base,
                "done": s.done, "kept": s.kept, "shared": s.shared, "waiting": s.waiting,
                "start_at": [[p, lps] for p, lps in s.start_at.items()],
                "end_at": [[p, ws] for p, ws in s.end_at.items()],
                "scanning": s.scanning, "following": s.following, "hits": s.hits,
                "to_end": [[w, closed] for w, closed in s.to_end], "state": s.state})
        return {"parts": parts, "buffer": rows.enc_all(op.buffer),
                "instant": ck.encode_time(op.instant), "bound": ck.encode_time(op.bound),
                "clock": ck.encode_time(op.clock)}

    def dec(op, data):
        h = op.src_heading
        rows = ck._Rows(h)
        keys = ck._Rows([h.type_of(n) for n in op.node.partition])
        op.parts = {}
        for d in ck._list(data["parts"], "parts"):
            ck._expect(isinstance(d, dict), "a partition is an object")
            s = _Sequence(h)
            s.rows = rows.dec_all(d["rows"])
            s.tuples = [None] * len(s.rows)
            s.base, s.done, s.kept, s.shared = (ck._count(d[f]) for f in
                                                ("base", "done", "kept", "shared"))
            ck._expect(s.base <= s.done <= s.m, "decided positions are retained rows")
            s.waiting = positions(d["waiting"], "waiting labels")
            s.start_at = {p: positions(lps, "labels") for p, lps in
                          ck._list(d["start_at"], "start_at")}
            s.end_at = {p: [window(w) for w in ck._list(ws, "windows")] for p, ws in
                        ck._list(d["end_at"], "end_at")}
            s.scanning = [window(w) for w in ck._list(d["scanning"], "scanning")]
            s.following = [window(w) for w in ck._list(d["following"], "following")]
            s.hits = positions(d["hits"], "hits")
            s.to_end = []
            for w, closed in ck._list(d["to_end"], "to_end"):
                ck._expect(type(closed) is bool, "closed is true or false")
                s.to_end.append((window(w), closed))
            ck._expect(d["state"] in (0, 1, 2), "a tumbling state is 0, 1 or 2")
            s.state = d["state"]
            op.parts[keys.dec(d["key"])] = s
        op.buffer = rows.dec_all(data["buffer"])
        op.instant = ck.decode_time(data["instant"])
        op.bound = ck.decode_time(data["bound"])
        op.clock = ck.decode_time(data["clock"])

    ck._FIELDS[WindowByRows] = {"src_heading", "parts", "buffer", "instant", "bound", "clock"}
    ck._STATES[WindowByRows] = (enc, dec)
    ck._FIELDS[WindowProject] = ck._FIELDS[RowMap]
    ck._STATES[WindowProject] = ck._STATES[RowMap]


_register_checkpoint_codecs()

__all__ = ["WindowByRows", "WindowProject", "build_windowby", "project_keeps_windows",
           "projects_windows", "window_key", "window_keys"]
