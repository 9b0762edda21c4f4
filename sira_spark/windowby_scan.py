"""The WINDOWBY scan over a sequence split into chunks (seed 003, section 5), engine-free.

Spark's translation (``sira_spark/windowby.py``) range-partitions the sorted input into chunks:
consecutive runs of the global order (partition attributes, order attributes, then the tuple),
so a sequence may span several chunks and a chunk may hold several sequences (its *pieces*).
This module is what runs on one chunk, in a Python worker; it knows nothing of Spark:

* :class:`Chunk` holds a chunk's narrow rows (only the attributes the conditions read, as sira
  tuples), the row just before it and just after it in the same sequence (so PREV of its first
  row and NEXT of its last exist), and where its pieces sit in their sequences (first
  position, sequence length and the global number ``g0`` of the sequence's first row). Every
  condition is the reference's own (:class:`sira.engine.windowby._Condition`: three-valued
  logic, pinned positions by :func:`sira.engine.windowby._pin`), evaluated on the chunk's rows.
* A window in progress is an :class:`Item`: its label and start variables (values, not rows),
  which clause it searches (START of a LABEL window, or END), from which position, and whether
  that position is pinned. :meth:`Chunk.run` advances an item over the chunk's positions; an
  item whose search leaves the chunk is *handed over* to the chunk holding its next position
  (forward, or backward for a LABEL window's start) -- the seed's unfinished windows, carrying
  their start variables but no tuples. A window is reported by the chunk where its END is found.
* First pass (:meth:`Chunk.first_pass`): the windows that start in the chunk, each advanced as
  far as the chunk allows. Later rounds (:meth:`Chunk.run` on the items handed over) finish
  them; an item is handed over once per chunk boundary it crosses, so the work is the
  windows' own length (what the reference's scan walks) plus one step per boundary.
* Tumbling windows chain: a window may start only after the previous one ended. The first pass
  computes each chunk's chain *speculatively*, as if no window were open at its start; the
  only state a chunk hands to the next is the one window open at its end (or none).
  :meth:`Chunk.tumble` redoes a chunk's chain for the window actually open at its start, until
  the chain meets a start of the speculative chain (from there on both are the same) and says
  which speculative windows to drop. Only a window spanning a whole chunk makes the chain's
  correction go on to the following chunk.

The searches memoise, per chunk, the first position where a condition that does not depend on
the window (START without LABEL variables, END without LABEL or START variables) holds, so
every position is tested once per chunk for those conditions; a condition that reads the
window's variables is tested on the window's own positions only, as the reference does.

Output records (:data:`RECORD_FIELDS`) are windows by global row numbers (``g0`` the
sequence's first row, ``gn`` its last, ``gl``/``gs``/``ge`` the label, start and end rows),
items handed over (``kind`` 1, with the chunk they go to) and tumbling reports (``kind`` 2:
the window open at a chunk's end, or how a chunk's chain was corrected). Items, reports and
chunk summaries cross between Spark passes as data only (:class:`Codec`: JSON, each value
written by the checkpoint codecs of ``sira.streams.checkpoint`` for its sira type), never as
Python objects.
"""

from __future__ import annotations

import json
from bisect import bisect_right

from sira.engine.windowby import MISSING, _Condition, _pin, _reads_roles

#: record fields: kind (0 window, 1 item handed over, 2 tumbling report), the chunk the record
#: belongs to (windows: where found; items: where they go), the window's rows, flags, the
#: speculative flag and tag of tumbling windows, the encoded item or report (:class:`Codec`)
RECORD_FIELDS = ("k", "c", "g0", "gn", "gl", "gs", "ge", "opened", "closed", "spec", "tag",
                 "blob")
WINDOW, ITEM, REPORT = 0, 1, 2
NEVER = 2 ** 62  # a drop point past every row
DONE = "done"  # the exit of a tumbling chain that ended with an unclosed window


class Plan:
    """What every chunk needs to know of the node (shipped to the workers with the pass's
    function; the conditions are rebuilt there): the narrowed node whose
    conditions are evaluated, the pins, and which conditions do not depend on the window."""

    def __init__(self, node, relations: dict, key_types=()):
        self.node = node
        self.relations = relations  # relational operands of the conditions, as values
        self.label = node.label is not None
        self.kind = node.kind
        self.start_unbounded = node.start.unbounded
        self.end_unbounded = node.end.unbounded
        self.end_pin = None if node.end.unbounded else _pin(node, "end", ("label", "start"))
        self.start_pin = None if (node.start.unbounded or node.label is None) else \
            _pin(node, "start", ("label",))
        self.start_alone = not _reads_roles(node, "start", ("label",))
        self.end_alone = not _reads_roles(node, "end", ("label", "start"))
        self.codec = Codec(node.source.heading, key_types)
        self._conds = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_conds"] = None
        return state

    def conditions(self):
        if self._conds is None:
            relation_of = self.relations.__getitem__
            self._conds = {w: _Condition(self.node, w, relation_of)
                           for w in ("label", "start", "end")}
        return self._conds


class Codec:
    """The data-only form of what crosses between passes (bytes of JSON): items, tumbling
    reports and jobs, and chunk summaries. A narrow row is the list of its values, each
    written for its type by ``sira.streams.checkpoint.encode_value`` (dates and timestamps
    in ISO form, intervals as [begin, end], nested relations as sorted rows, ...), and read
    back, checked against the type, by ``decode_value``; a partition key likewise with
    ``key_types``. Everything else is integers, booleans, strings and null."""

    def __init__(self, heading, key_types=()):
        self.heading = heading
        self.types = heading.types
        self.key_types = tuple(key_types)

    # ------------------------------------------------------------------ values
    def _row(self, row):
        from sira.streams.checkpoint import encode_row
        return None if row is None else encode_row(self.types, row.values)

    def _unrow(self, obj):
        from sira.streams.checkpoint import decode_row
        from sira.values import Tuple
        return None if obj is None else Tuple(self.heading, decode_row(self.types, obj))

    def _var(self, v):
        return None if v is None else [v[0], self._row(v[1]), self._row(v[2]),
                                       self._row(v[3])]

    def _unvar(self, obj):
        return None if obj is None else (obj[0], self._unrow(obj[1]), self._unrow(obj[2]),
                                         self._unrow(obj[3]))

    def _item(self, it):
        return [it.g0, it.n, it.l, self._var(it.lv), it.s, self._var(it.sv), it.opened,
                it.stage, it.frm, it.pin]

    def _unitem(self, obj):
        g0, n, l, lv, s, sv, opened, stage, frm, pin = obj
        return Item(g0, n, l, self._unvar(lv), s, self._unvar(sv), opened, stage, frm, pin)

    def _exit(self, e):
        """A tumbling chain's exit: an item, :data:`DONE` or None."""
        return {"item": self._item(e)} if isinstance(e, Item) else e

    def _unexit(self, obj):
        return self._unitem(obj["item"]) if isinstance(obj, dict) else obj

    # ------------------------------------------------------------------ messages
    def dumps(self, message) -> bytes:
        """``("item", item)``, ``("job", entry, tag)`` (a tumbling chain to redo),
        ``("exit", exit)`` or ``("fix", tag, drop, exit)`` as bytes."""
        what = message[0]
        if what == "item":
            obj = ["item", self._item(message[1])]
        elif what == "job":
            obj = ["job", self._item(message[1]), message[2]]
        elif what == "exit":
            obj = ["exit", self._exit(message[1])]
        elif what == "fix":
            obj = ["fix", message[1], message[2], self._exit(message[3])]
        else:
            raise ValueError(f"no encoding for {what!r}")
        return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()

    def loads(self, blob: bytes):
        obj = json.loads(blob)
        what = obj[0]
        if what == "item":
            return ("item", self._unitem(obj[1]))
        if what == "job":
            return ("job", self._unitem(obj[1]), obj[2])
        if what == "exit":
            return ("exit", self._unexit(obj[1]))
        if what == "fix":
            return ("fix", obj[1], obj[2], self._unexit(obj[3]))
        raise ValueError(f"not a hand-over message: {what!r}")

    def dump_summary(self, summary: dict) -> bytes:
        """A chunk's summary (:func:`summarize`), its keys sira values of ``key_types``."""
        from sira.streams.checkpoint import encode_row
        obj = dict(summary)
        for k in ("first_key", "last_key"):
            obj[k] = encode_row(self.key_types, summary[k])
        for k in ("first_row", "last_row"):
            obj[k] = self._row(summary[k])
        return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()

    def load_summary(self, blob: bytes) -> dict:
        from sira.streams.checkpoint import decode_row
        obj = json.loads(blob)
        for k in ("first_key", "last_key"):
            obj[k] = decode_row(self.key_types, obj[k])
        for k in ("first_row", "last_row"):
            obj[k] = self._unrow(obj[k])
        return obj


#: where a variable of each kind is in a bound position (position, prev, as, next)
_INDEX = {"at": 0, "prev": 1, "as": 2, "next": 3}


class Item:
    """A window in progress: its sequence (g0, n), label position and variables, start
    position and variables (None: a LABEL window whose START never held), which clause it
    searches (``"S"``: a LABEL window's START, ``"E"``: the END), from which position, and
    whether only that position may match (a pinned clause)."""

    __slots__ = ("g0", "n", "l", "lv", "s", "sv", "opened", "stage", "frm", "pin")

    def __init__(self, g0, n, l, lv, s, sv, opened, stage, frm, pin):
        self.g0, self.n, self.l, self.lv, self.s, self.sv = g0, n, l, lv, s, sv
        self.opened, self.stage, self.frm, self.pin = opened, stage, frm, pin


class Piece:
    """The part of one sequence inside a chunk: rows ``i0..i1-1`` of the chunk at positions
    ``lo..hi`` of a sequence of ``n`` rows whose first row has the global number ``g0``."""

    __slots__ = ("i0", "i1", "lo", "hi", "n", "g0", "head", "tail")

    def __init__(self, i0, i1, lo, n, g0, head, tail):
        self.i0, self.i1, self.lo, self.n, self.g0 = i0, i1, lo, n, g0
        self.hi = lo + (i1 - i0) - 1
        self.head, self.tail = head, tail


class Chunk:
    """One chunk's narrow rows and its pieces (see the module docstring).

    ``info``: ``c`` (the chunk's id), ``base`` (global number of its first row), ``head_pos``
    and ``head_n`` (position of its first row in its sequence, and that sequence's length),
    ``tail_n`` (length of its last row's sequence), ``before``/``after`` (the narrow rows just
    before and after it in the same sequence, or None), ``bases``/``ids`` (every chunk's
    first global number and id, to route items).
    """

    def __init__(self, plan: Plan, info: dict, keys: list, rows: list):
        self.plan = plan
        self.conds = plan.conditions()
        # (width of the scope's row, [(place in it, role, index in a variable)]): only the
        # variables a condition reads are filled (sira.engine.windowby._Condition)
        self.slots = {w: (cond.width, [(pos, role, _INDEX[kind]) for pos, role, kind in
                                       cond.slots])
                      for w, cond in self.conds.items() if not cond.always}
        self.info = info
        self.c = info["c"]
        self.base = info["base"]
        self.rows = rows
        self.pieces = []
        self.by_g0 = {}
        m = len(rows)
        i0 = 0
        while i0 < m:
            i1 = i0 + 1
            while i1 < m and keys[i1] == keys[i0]:
                i1 += 1
            head = i0 == 0 and info["cont_before"]
            tail = i1 == m and info["cont_after"]
            lo = info["head_pos"] if i0 == 0 else 1
            if i0 == 0:
                n = info["head_n"]
            elif i1 == m:
                n = info["tail_n"]
            else:
                n = i1 - i0
            p = Piece(i0, i1, lo, n, self.base + i0 - (lo - 1), head, tail)
            self.pieces.append(p)
            self.by_g0[p.g0] = p
            i0 = i1
        self._memo = {}

    # ------------------------------------------------------------------ variables
    def var(self, piece, q):
        """(position, prev, as, next) of position q of ``piece`` (None where absent)."""
        i = piece.i0 + q - piece.lo
        rows = self.rows
        if q == 1:
            prev = None
        elif i > piece.i0:
            prev = rows[i - 1]
        else:
            prev = self.info["before"]
        if q == piece.n:
            nxt = None
        elif i + 1 < piece.i1:
            nxt = rows[i + 1]
        else:
            nxt = self.info["after"]
        return (q, prev, rows[i], nxt)

    def test(self, which, binds) -> bool:
        cond = self.conds[which]
        if cond.always:
            return True
        width, slots = self.slots[which]
        row = [None] * width
        for pos, role, i in slots:
            v = binds.get(role)
            if v is not None:
                row[pos] = v[i]
        value = cond.fn(tuple(row))
        return value is not MISSING and bool(value)

    def first(self, piece, which, frm, binds, alone):
        """The first position q in ``frm..piece.hi`` where the clause holds (None: none in
        the chunk). ``alone``: the clause does not depend on ``binds`` (memoised)."""
        role = "start" if which == "start" else "end"
        if not alone:
            for q in range(frm, piece.hi + 1):
                if self.test(which, {**binds, role: self.var(piece, q)}):
                    return q
            return None
        memo = self._memo.setdefault((which, piece.g0), {})
        path = []
        q = frm
        found = None
        while q <= piece.hi:
            if q in memo:
                found = memo[q]
                break
            if self.test(which, {role: self.var(piece, q)}):
                found = q
                break
            path.append(q)
            q += 1
        for p in path:
            memo[p] = found
        if found is not None:
            memo[found] = found
        return found

    # ------------------------------------------------------------------ records
    def window(self, item, e, closed, spec=False, tag=-1):
        g0 = item.g0
        gl = None if item.l is None else g0 + item.l - 1
        return (WINDOW, self.c, g0, g0 + item.n - 1, gl, g0 + item.s - 1, g0 + e - 1,
                item.opened, closed, spec, tag, None)

    def route(self, item):
        """The record handing ``item`` over to the chunk holding its next position."""
        g = item.g0 + item.frm - 1
        bases = self.info["bases"]
        target = self.info["ids"][bisect_right(bases, g) - 1]
        return (ITEM, target, None, None, None, None, None, None, None, None, None,
                self.plan.codec.dumps(("item", item)))

    # ------------------------------------------------------------------ items
    def to_end(self, item):
        """Item entering its END search (its start known)."""
        plan = self.plan
        item.stage = "E"
        item.pin = False
        item.frm = item.s
        if plan.end_unbounded:
            return
        if plan.end_pin is not None:
            role, k = plan.end_pin
            base = item.l if role == "label" else (item.s if item.opened else None)
            if base is not None:
                item.frm = base + k
                item.pin = True

    def unopened(self, item):
        item.s, item.sv, item.opened = 1, None, False
        self.to_end(item)

    def run(self, item):
        """Advance ``item`` over this chunk: the window's record when it ends here, else the
        record handing it over (a generator of one record)."""
        plan = self.plan
        while True:
            if item.stage == "E" and plan.end_unbounded:
                return self.window(item, item.n, True)
            if item.pin and not ((1 if item.stage == "S" else item.s) <= item.frm <= item.n):
                if item.stage == "S":  # a pinned START outside the sequence never holds
                    self.unopened(item)
                    continue
                return self.window(item, item.n, False)
            piece = self.by_g0.get(item.g0)
            if piece is None or not piece.lo <= item.frm <= piece.hi:
                return self.route(item)
            binds = {"label": item.lv}
            if item.stage == "S":
                if item.pin:
                    q = item.frm if self.test("start", {**binds, "start": self.var(
                        piece, item.frm)}) else None
                    if q is None:
                        self.unopened(item)
                        continue
                else:
                    q = self.first(piece, "start", item.frm, binds, plan.start_alone)
                    if q is None:
                        if piece.hi == item.n:
                            self.unopened(item)
                            continue
                        item.frm = piece.hi + 1
                        return self.route(item)
                item.s, item.sv, item.opened = q, self.var(piece, q), True
                self.to_end(item)
                continue
            binds["start"] = item.sv
            if item.pin:
                if self.test("end", {**binds, "end": self.var(piece, item.frm)}):
                    return self.window(item, item.frm, True)
                return self.window(item, item.n, False)
            q = self.first(piece, "end", item.frm, binds, plan.end_alone)
            if q is not None:
                return self.window(item, q, True)
            if piece.hi == item.n:
                return self.window(item, item.n, False)
            item.frm = piece.hi + 1
            return self.route(item)

    # ------------------------------------------------------------------ first pass
    def first_pass(self):
        """Records of the first pass: windows found here, items handed over, and for tumbling
        the report of the window open at the chunk's end."""
        plan = self.plan
        out = []
        for piece in self.pieces:
            if plan.label:
                for lp in range(piece.lo, piece.hi + 1):
                    lv = self.var(piece, lp)
                    if not self.test("label", {"label": lv}):
                        continue
                    item = Item(piece.g0, piece.n, lp, lv, 1, None, True, "S", 1, False)
                    if plan.start_unbounded:
                        self.to_end(item)
                    elif plan.start_pin is not None:
                        item.frm, item.pin = lp + plan.start_pin[1], True
                    out.append(self.run(item))
            elif plan.start_unbounded:
                if piece.lo == 1:
                    item = Item(piece.g0, piece.n, None, None, 1, None, True, "E", 1, False)
                    self.to_end(item)
                    out.append(self.run(item))
            elif plan.kind == "sliding":
                for s in range(piece.lo, piece.hi + 1):
                    sv = self.var(piece, s)
                    if self.test("start", {"start": sv}):
                        item = Item(piece.g0, piece.n, None, None, s, sv, True, "E", s, False)
                        self.to_end(item)
                        out.append(self.run(item))
            else:
                windows, exit_, _ = self.chain(piece, piece.lo)
                out += [self.window(it, e, closed, spec=piece.head) for it, e, closed in windows]
                if piece.tail:
                    out.append(self.report(("exit", exit_)))
        return out

    def report(self, value):
        return (REPORT, self.c, None, None, None, None, None, None, None, None, None,
                self.plan.codec.dumps(value))

    # ------------------------------------------------------------------ tumbling
    def chain(self, piece, p, stop=None):
        """The tumbling chain of ``piece`` from position p with no window open: (windows as
        (item, end, closed), the exit: the item open at the chunk's end, :data:`DONE` after an
        unclosed window, or None, and the start where the chain met a start of ``stop`` or
        None)."""
        out = []
        while p <= piece.hi:
            s = self.first(piece, "start", p, {}, True)
            if s is None:
                break
            if stop is not None and s in stop:
                return out, None, s
            item = Item(piece.g0, piece.n, None, None, s, self.var(piece, s), True, "E", s,
                        False)
            self.to_end(item)
            rec = self.run(item)
            if rec[0] == ITEM:
                return out, item, None
            e, closed = rec[6] - piece.g0 + 1, rec[8]
            out.append((item, e, closed))
            if not closed or e == piece.n:  # nothing starts after an unclosed window
                return out, DONE, None
            p = e + 1
        return out, None, None

    def tumble(self, entry: Item, tag: int):
        """Records of this chunk's head piece when ``entry`` (a window of the same sequence)
        is open at the chunk's start: its end, the chain from there until it meets the
        speculative chain, and a report (drop point, the window open at the chunk's end)."""
        piece = self.pieces[0]
        spec, spec_exit, _ = self.chain(piece, piece.lo)
        starts = {it.s for it, _, _ in spec}
        if isinstance(spec_exit, Item):
            starts.add(spec_exit.s)
        out = []
        rec = self.run(entry)
        if rec[0] == ITEM:  # the window spans the whole chunk (so it goes on to the next)
            return [self.report(("fix", tag, NEVER, entry))]
        out.append(rec[:10] + (tag, None))
        e, closed = rec[6] - piece.g0 + 1, rec[8]
        drop, exit_ = NEVER, DONE
        if closed:
            windows, exit_, met = self.chain(piece, e + 1, starts)
            out += [self.window(it, q, cl, tag=tag) for it, q, cl in windows]
            if met is not None:
                drop, exit_ = piece.g0 + met - 1, spec_exit
        out.append(self.report(("fix", tag, drop, exit_)))
        return out


# ---------------------------------------------------------------------- the driver's part

def summarize(c, keys, rows) -> dict:
    """A chunk's summary for :func:`chunk_infos` (a handful of values, whatever its size)."""
    m = len(keys)
    first_run = 1
    while first_run < m and keys[first_run] == keys[0]:
        first_run += 1
    last_run = 1
    while last_run < m and keys[m - 1 - last_run] == keys[-1]:
        last_run += 1
    return {"c": c, "count": m, "first_key": keys[0], "last_key": keys[-1],
            "first_run": first_run, "last_run": last_run, "first_row": rows[0],
            "last_row": rows[-1]}


def chunk_infos(summaries) -> dict:
    """Each non-empty chunk's ``info`` for :class:`Chunk` from all chunks' summaries: global
    numbers by prefix sums of the counts, positions and sequence lengths by following the
    sequences that continue from one chunk to the next (C rows on the driver)."""
    chunks = sorted(summaries, key=lambda s: s["c"])
    bases, base = [], 0
    for s in chunks:
        bases.append(base)
        base += s["count"]
    k = len(chunks)
    cont_before = [i > 0 and chunks[i - 1]["last_key"] == chunks[i]["first_key"]
                   for i in range(k)]
    cont_after = [i + 1 < k and cont_before[i + 1] for i in range(k)]
    single = [s["first_run"] == s["count"] for s in chunks]
    head_pos, tail_pos = [1] * k, [1] * k
    for i in range(k):
        if cont_before[i]:
            head_pos[i] = tail_pos[i - 1] + chunks[i - 1]["last_run"]
        tail_pos[i] = head_pos[i] if single[i] else 1
    head_n, tail_n = [0] * k, [0] * k
    for i in reversed(range(k)):
        tail_n[i] = head_n[i + 1] if cont_after[i] else tail_pos[i] + chunks[i]["last_run"] - 1
        head_n[i] = tail_n[i] if single[i] else head_pos[i] + chunks[i]["first_run"] - 1
    ids = [s["c"] for s in chunks]
    out = {}
    for i, s in enumerate(chunks):
        out[s["c"]] = {"c": s["c"], "base": bases[i], "head_pos": head_pos[i],
                       "head_n": head_n[i], "tail_n": tail_n[i],
                       "cont_before": cont_before[i], "cont_after": cont_after[i],
                       "single": single[i],
                       "before": chunks[i - 1]["last_row"] if cont_before[i] else None,
                       "after": chunks[i + 1]["first_row"] if cont_after[i] else None,
                       "bases": bases, "ids": ids}
    return out


def entry_tag(item) -> int:
    return item.g0 + item.s - 1


class TumblingChain:
    """The driver's side of tumbling windows: which window is open at each chunk's start.

    ``exits``: from the first pass, the window open at each chunk's end (or None) when none is
    open at its start. A chunk whose sequence continues from the previous chunk while a window
    is open there must be redone (:meth:`Chunk.tumble`) for that window: :meth:`wanted` names
    those (chunk, entry) pairs, guessing the entries of later chunks from the first pass so that
    one round usually settles every chunk; :meth:`learn` takes the reports of a round.
    """

    def __init__(self, infos: dict, exits: dict):
        self.infos = infos
        self.order = sorted(infos)
        self.exits = exits
        self.results: dict = {}

    def learn(self, c, report) -> None:
        """Take chunk c's report of :meth:`Chunk.tumble`."""
        _, tag, drop, exit_ = report
        self.results[(c, tag)] = (drop, exit_)

    def _walk(self):
        """(decisions {chunk: (tag, drop)}, the first (chunk, entry) not computed or None)."""
        decisions = {}
        carried = None
        for c in self.order:
            info = self.infos[c]
            entry = carried if info["cont_before"] else None
            if entry is None:
                exit_ = self.exits.get(c)
            elif entry == DONE:  # the sequence's scan ended before this chunk
                decisions[c] = (None, NEVER)
                exit_ = DONE if info["single"] else self.exits.get(c)
            else:
                tag = (c, entry_tag(entry))
                if tag not in self.results:
                    return decisions, (c, entry)
                drop, fixed = self.results[tag]
                decisions[c] = (tag[1], drop)
                exit_ = fixed if info["single"] else self.exits.get(c)
            carried = exit_ if info["cont_after"] else None
        return decisions, None

    def wanted(self) -> list:
        """The (chunk, entry) pairs to compute next ([] when every chunk is settled)."""
        _, missing = self._walk()
        if missing is None:
            return []
        out = [missing]
        after = False
        for i, c in enumerate(self.order):
            if c == missing[0]:
                after = True
                continue
            if not after or not self.infos[c]["cont_before"]:
                continue
            guess = self.exits.get(self.order[i - 1])
            if isinstance(guess, Item) and (c, entry_tag(guess)) not in self.results:
                out.append((c, guess))
        return out

    def decisions(self) -> dict:
        decisions, missing = self._walk()
        assert missing is None
        return decisions
