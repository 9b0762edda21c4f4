"""IBM SPL windows on live streams (seed 001, "Window clause"), as one dataflow operator.

``splwindow(s, ts, ...)`` on a live stream is the batch operator's own state machine fed as
rows arrive: :class:`sira.engine.spl.SplScanner` for tumbling and sliding windows,
:class:`sira.engine.spl.IntervalScanner` for timeInterval panes. The batch operator reads the
stream in an order that breaks ties between tuples of one time canonically, so the tuples of
an instant are held until the instant is complete (a later row, or a bound past it) and then
fed in that order; each emission leaves as soon as it is final:

* a count, delta or punctuation policy fires on the tuple that arrives: its emission leaves
  when that tuple's instant is complete, with ``at`` its ts;
* a time policy (tumbling ``time(T)``, a ``time(T)`` trigger) ticks at o + kT; the batch
  operator ticks only up to the last tuple's ts, so a tick leaves once a tuple at or after it
  has arrived (the output's bound waits at the next tick while a window holds tuples);
* a timeInterval pane leaves on time when the watermark (the largest ts seen) reaches its end,
  or, on a stream in ts order, as soon as the bound reaches its end (no tuple of the pane can
  come any more); each late tuple within ``discardage`` makes it leave once more, at the
  watermark;
* ``finish()`` (the final punctuation) flushes what the batch operator flushes at the end of
  its input: the panes still open; a tumbling or sliding window's trailing tuples are never
  emitted.

The output is a stream travelling with ``at`` (in microseconds when ``at`` is a TIMESTAMP). Tumbling and sliding windows need ``ts`` to be
the stream's rowtime (``arrival(...)`` then breaks ties within an instant); timeInterval windows
read the stream in arrival order, so their rowtime is ``arrival(...)``'s attribute when given
(``ts`` is then the event time, and may come late) and ``ts`` otherwise.

    >>> import sira
    >>> from sira.streams import StreamEngine
    >>> engine = StreamEngine()
    >>> s = engine.create_stream("s", {"v": sira.INT})
    >>> q = engine.register("splwindow(s, ts, tumbling, count(2))")
    >>> p = s.attach()
    >>> p.insert_many([({"v": 1}, 1), ({"v": 2}, 2), ({"v": 3}, 3)])
    >>> [(r["instance"], r["at"], sorted(t["v"] for t in r["tuples"])) for r in q.results()]
    [(1, 2, [1, 2])]
"""

from __future__ import annotations

from ..algebra.spl import SplWindow
from ..engine.guards import Guard, operator_label
from ..engine.spl import (IntervalScanner, SplScanner, _fit, _from_micros, _Held, _micros,
                          _value_getter, order_key)
from ..types import TIMESTAMP
from ..intervals import Interval
from ..values import Relation
from .operators import (INFINITY, LIVE_MAX_TUPLES, NotSupportedLive, Operator, _reorder,
                        bound_passed, complete_instants, row_getter_tuple)


def build_spl(node, build, streams, rowtime_of_source):
    """The operator computing ``node`` (an SPLWINDOW) on its source stream, already built by
    ``build``; NotSupportedLive for what cannot run."""
    src, kind = build(node.source)
    if kind != "stream":
        raise NotSupportedLive(node="SPLWINDOW of something not a stream")
    rowtime = rowtime_of_source(node.source, streams)
    order = node.arrival if node.kind == "timeinterval" and node.arrival else node.ts
    if order != rowtime:
        what = "arrival attribute" if order == node.arrival else "ts"
        raise NotSupportedLive(node=f"an SPL {node.kind} window whose {what} '{order}' is not "
                               f"the rowtime of its stream ('{rowtime}'): the window reads the "
                               f"stream in that order")
    op = SplRows(node)
    src.connect(op)
    return op


class SplRows(Operator):
    """SPLWINDOW on a stream (see the module docstring).

    ``buffer`` holds the rows of the latest instant (``instant``) not yet fed to ``scanner``;
    ``counters`` the instances emitted per partition; ``serial`` numbers the tuples fed, so
    the scanner's ids never compare rows.
    """

    def __init__(self, node: SplWindow):
        super().__init__(node, node.heading)
        self.src_heading = node.source.heading
        interval = node.kind == "timeinterval"
        held = _Held(Guard(operator_label(node), LIVE_MAX_TUPLES), 3 if interval else 2)
        self.scanner = IntervalScanner(node, held) if interval else SplScanner(node, held)
        self.buffer: list = []
        self.instant = None
        self.counters: dict = {}
        self.serial = 0
        self.bound = None

    def compile(self):
        node, h = self.node, self.src_heading
        names = list(node.partition) + ["instance", "at", "tuples"]
        if node.kind == "timeinterval":
            names.append("pane")
        order = _reorder([names.index(n) for n in node.heading.names])
        ev = node.eviction
        punct = h.index(ev.attr) if ev is not None and ev.kind == "punct" else None
        ts = h.index(node.ts)
        # a timeInterval window's event time may be a TIMESTAMP: scanned in microseconds
        timestamp = node.ts_type == TIMESTAMP
        time = (lambda row: _micros(row[ts])) if timestamp else (lambda row: row[ts])
        back = _from_micros if timestamp else (lambda v: v)
        return (row_getter_tuple([h.index(n) for n in node.partition]), time,
                order_key(h, node), _value_getter(h, node.eviction),
                _value_getter(h, node.trigger), punct, back, order)

    # ------------------------------------------------------------------ input
    def on_rows(self, rows, port):
        self.scanner.held.reset()
        out: list = []
        self._feed(complete_instants(self, rows, self.functions()[2]), out)
        if out:
            self.emit_rows(out)

    def on_bound(self, b, port):
        passed = bound_passed(self, b, self.functions()[2])
        if passed is None:
            return
        self.scanner.held.reset()
        out: list = []
        if passed[1]:
            self._feed(passed[1], out)
        scanner = self.scanner
        if isinstance(scanner, IntervalScanner):
            if b == INFINITY:
                self._emit(scanner.finish(), out)
            elif self.node.arrival is None:
                self._emit(scanner.due(b), out)  # in ts order: no tuple of a pane ending by b
        if out:
            self.emit_rows(out)
        out_bound = self._out_bound(b)
        if out_bound is not None:
            self.emit_bound(out_bound)

    def _out_bound(self, b):
        """No emission still to come is earlier than this."""
        scanner = self.scanner
        if b == INFINITY:
            return b
        if isinstance(scanner, IntervalScanner):
            if self.node.arrival is None or scanner.watermark is None:
                return b if self.node.arrival is None else None
            return scanner.watermark
        if scanner.period is not None and scanner.parts and scanner.next_tick is not None:
            return min(b, scanner.next_tick)
        return b

    def _feed(self, rows, out) -> None:
        """Feed rows of complete instants to the scanner, in the batch order."""
        part, time, _, value, trigger_value, punct, _, _ = self.functions()
        scanner = self.scanner
        push = scanner.push
        if isinstance(scanner, IntervalScanner):
            for row in rows:
                emitted = push(part(row), time(row), row)
                if emitted:
                    self._emit(emitted, out)
            return
        serial = self.serial
        for row in rows:
            serial += 1
            emitted = push(part(row), time(row), (serial, row), value(row),
                           None if punct is None else row[punct], trigger_value(row))
            if emitted:
                self._emit(emitted, out)
        self.serial = serial

    def _emit(self, emissions, out) -> None:
        back, order = self.functions()[-2:]
        heading = self.src_heading
        interval = isinstance(self.scanner, IntervalScanner)
        duration = self.node.interval_units[0] if interval else None
        counters = self.counters
        fit = _fit(self.node.ts_type)
        for emission in emissions:
            if interval:
                key, at, start, content = emission
                if fit is not None:
                    fit(start), fit(start + duration)
                extra = (Interval(back(start), back(start + duration)),)
            else:
                key, at, content = emission
                content = [row for _, row in content]
                extra = ()
            if fit is not None:
                fit(at)
            counters[key] = instance = counters.get(key, 0) + 1
            value = key + (instance, back(at), Relation(heading, frozenset(content))) + extra
            out.append((at, order(value) if order is not None else value))

    def pending(self):
        """The earliest instant a bound must pass to let something out (None: nothing held)."""
        if self.instant is not None:
            return self.instant
        scanner = self.scanner
        if isinstance(scanner, IntervalScanner):
            return scanner.pending[0][0] - 1 if scanner.pending else None
        return None


# ------------------------------------------------------------------------------ checkpoints

def _register_checkpoint_codecs() -> None:
    """Teach the data-only checkpoint format (:mod:`sira.streams.checkpoint`) this operator's
    state: the scanner's partitions, counters and timers, the rows by their values."""
    import heapq
    import math

    from . import checkpoint as ck

    def codecs(op):
        h = op.src_heading
        return ck._Rows(h), ck._Rows([h.type_of(n) for n in op.node.partition])

    def enc_number(v):
        """A delta value (an int, or a float of a FLOAT attribute) or None."""
        if v is None or type(v) is int or math.isfinite(v):
            return v
        return "inf" if v > 0 else "-inf"

    def dec_number(v):
        if v is None:
            return None
        ck._expect(type(v) in (int, float) or v in ("inf", "-inf"), f"{v!r} is not a number")
        return float(v) if v in ("inf", "-inf") or type(v) is float else v

    def enc(op):
        rows, keys = codecs(op)
        s = op.scanner
        data = {"buffer": rows.enc_all(op.buffer), "instant": ck.encode_time(op.instant),
                "counters": [[keys.enc(k), n] for k, n in op.counters.items()],
                "serial": op.serial, "bound": ck.encode_time(op.bound)}
        if isinstance(s, IntervalScanner):
            data["panes"] = [[keys.enc(k), start, rows.enc_all(content)]
                             for (k, start), content in s.panes.items()]
            data["pending"] = [[end, start, keys.enc(k)] for end, start, k in s.pending]
            data["watermark"] = s.watermark
            return data

        def ident(i):
            return [i[0], rows.enc(i[1])]
        data.update(s.to_data(keys.enc, ident, enc_number))
        return data

    def dec(op, data):
        rows, keys = codecs(op)
        s = op.scanner
        op.buffer = rows.dec_all(data["buffer"])
        op.instant = ck.decode_time(data["instant"])
        op.counters = {keys.dec(k): ck._count(n) for k, n in ck._list(data["counters"],
                                                                        "counters")}
        op.serial = ck._count(data["serial"])
        op.bound = ck.decode_time(data["bound"])
        if isinstance(s, IntervalScanner):
            s.panes = {}
            s.reachable = []
            for k, start, content in ck._list(data["panes"], "panes"):
                ck._expect(type(start) is int, "a pane start is an integer")
                key = keys.dec(k)
                s.panes[(key, start)] = rows.dec_all(content)
                s.reachable.append((start + s.duration, start, key))
            heapq.heapify(s.reachable)
            s.pending = [(end, start, keys.dec(k))
                         for end, start, k in ck._list(data["pending"], "pending")]
            ck._expect(all(type(e) is int and type(st) is int for e, st, _ in s.pending),
                       "a pending pane's end and start are integers")
            ck._expect(all((k, st) in s.panes for _, st, k in s.pending),
                       "a pending pane that holds nothing")
            heapq.heapify(s.pending)
            ck._expect(data["watermark"] is None or type(data["watermark"]) is int,
                       "the watermark is an integer")
            s.watermark = data["watermark"]
            return

        def ident(obj):
            ck._expect(isinstance(obj, list) and len(obj) == 2 and type(obj[0]) is int,
                       "a window item is [serial, row]")
            return (obj[0], rows.dec(obj[1]))
        s.load_data(data, keys.dec, ident, dec_number, ck._expect)

    ck._FIELDS[SplRows] = {"src_heading", "scanner", "buffer", "instant", "counters", "serial",
                           "bound"}
    ck._STATES[SplRows] = (enc, dec)


_register_checkpoint_codecs()

__all__ = ["SplRows", "build_spl"]
