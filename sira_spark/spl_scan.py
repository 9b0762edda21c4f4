"""The scan of windows whose partition eviction couples the keys, over a stream split into
chunks (seed 003, section 5).

Under ``partitioncount(N)`` or ``tuplecount(N)`` whether a key's partition survives depends on
every other key's tuples, so the tumbling and sliding windows are one state machine over the
whole stream (:class:`sira.engine.spl.SplScanner`, the reference's own). That machine forgets:
a partition ends when it flushes or is evicted, so two scans of the same tuples from different
states usually reach the same state after a while, and from then on emit the same windows
(their :meth:`~sira.engine.spl.SplScanner.digest` is equal). This module runs the scan over
the stream cut into *chunks* (contiguous runs of the stream order), engine-free
(``sira_spark/spl.py`` runs it in Spark's Python workers):

* First pass (:func:`first_pass`, every chunk at once, streaming): each chunk scanned from an
  empty state (the timer's origin being the stream's first time). It is exact for the first
  chunk; for the others its windows are *speculative*. A chunk reports the digest of its empty
  state, the digests after its 1st, 2nd, 4th, 8th ... tuple and after its last (its
  *checkpoints*), and its exit state.
* The driver (:class:`Walk`, one report per chunk) walks the chunks in order: a chunk entered
  with a state whose digest is its empty state's is exact as it is; any other is corrected
  (:func:`correct`): scanned from its entry state, its windows kept, until its state's digest
  equals the speculative scan's at a checkpoint. From that tuple on, the speculative windows
  are the true ones, and the chunk's exit is the speculative exit. Entries the driver does not
  know yet are guessed (the previous chunk's speculative exit), so one round usually settles
  every chunk; a chunk whose corrected scan never meets the speculative one costs one more
  round for the chunk after it.

Cost: one pass over the tuples, and for each corrected chunk a scan until the two scans meet
(found within twice that many tuples, at a checkpoint). When they never meet (a key never
evicted whose windows the entry's tuples offset, as one key holding most tuples under a tumbling
count), the chunks are corrected one after another, each scanned twice: the work stays linear
and each task holds one chunk, but the rounds are as many as the chunks. The driver holds one
report and a few digests per chunk. ``tests/test_spl_scan.py`` runs the whole scheme without
Spark.
"""

from __future__ import annotations

import copy
import json

from sira.engine.spl import SplScanner

from .compiler import reported

NEVER = 2 ** 62  # a meeting point past every tuple: the corrected scan's windows are all kept

WINDOW, CHECK, REPORT = 0, 2, 3


def record_schema(at_type: str) -> str:
    """The records both passes make: a window (``g``: the position of the tuple whose arrival
    emitted it, ``seq``: its place among that arrival's windows, key text ``k``, ``at``, the
    positions of its tuples ``ids``), a checkpoint (``g``: the number of tuples scanned,
    ``d``: the state's digest) and a report (first pass: ``d``,
    the empty state's digest; a correction: ``g``, where it met the speculative scan, or
    NEVER); ``state``: the exit state as data (:func:`state_bytes`); ``c`` the chunk, ``tag``
    the entry (-1: speculative)."""
    return (f"kind int, c long, tag long, g long, seq long, k string, at {at_type}, "
            f"ids array<long>, d binary, state binary")


class Records:
    """Records of :func:`record_schema`, kept as columns (``columns``), as Arrow takes them."""

    __slots__ = ("columns",)

    def __init__(self):
        self.columns = tuple([] for _ in range(10))

    def add(self, kind, c, tag, g=None, seq=None, k=None, at=None, ids=None, d=None,
            state=None):
        for col, value in zip(self.columns, (kind, c, tag, g, seq, k, at, ids, d, state)):
            col.append(value)

    def windows(self, c, tag, g, emitted) -> None:
        """The windows one tuple's arrival ``g`` emitted."""
        for seq, (key, at, ids) in enumerate(emitted):
            self.add(WINDOW, c, tag, g, seq, key, at, ids)

    def __len__(self) -> int:
        return len(self.columns[0])

    def rows(self) -> list:
        """The records as tuples."""
        return list(zip(*self.columns))


def _same(v):
    return v


def state_bytes(scanner: SplScanner) -> bytes:
    """A scanner's state as JSON (:meth:`~sira.engine.spl.SplScanner.to_data`: its keys are
    the key texts, its ids the tuples' positions, its delta values numbers), never a pickle:
    the driver reads data, not code."""
    return json.dumps(scanner.to_data(_same, _same, _same), separators=(",", ":")).encode()


def scanner_from(blob: bytes, prototype: SplScanner) -> SplScanner:
    """The scanner :func:`state_bytes` wrote, a copy of ``prototype`` (its policy) holding
    that state and counting nothing."""
    scanner = copy.copy(prototype)
    scanner.held = None
    scanner.load_data(json.loads(blob), _same, _same, _same)
    return scanner


def _start(prototype: SplScanner, origin) -> SplScanner:
    """An empty scanner whose timer counts from the stream's first time ``origin``: its first
    tuple skips the ticks before it (no partition to emit), as the true scan has fired them."""
    scanner = copy.deepcopy(prototype)
    scanner.origin = origin
    if scanner.period is not None:
        scanner.next_tick = origin
    return scanner


def first_pass(c: int, batches, prototype: SplScanner, origin):
    """Records of chunk ``c`` scanned from an empty state: its windows, its checkpoints and
    its report. ``batches``: lists of columns (g, key, t, a, p, ta), in stream order."""
    scanner = _start(prototype, origin)
    out = Records()
    out.add(REPORT, c, -1, d=scanner.digest())
    n, next_check = 0, 1
    with reported():
        for g, k, t, a, p, ta in batches:
            for i in range(len(g)):
                emitted = scanner.push(k[i], t[i], g[i], a[i], p[i], ta[i])
                if emitted:
                    out.windows(c, -1, g[i], emitted)
                n += 1
                if n == next_check:
                    out.add(CHECK, c, -1, g=n, d=scanner.digest())
                    next_check *= 2
            yield out
            out = Records()
    if n and n != next_check // 2:
        out.add(CHECK, c, -1, g=n, d=scanner.digest())
    out.add(REPORT, c, -1, state=state_bytes(scanner))
    yield out


def correct(c: int, batches, entry: tuple, checks: dict, prototype: SplScanner):
    """Records of chunk ``c`` scanned from ``entry`` ((tag, scanner)) until its state's digest
    is the speculative scan's at one of ``checks`` ({tuples scanned: digest}): its windows
    (tagged) and a report (the position ``g`` of the tuple where the scans met, or NEVER and
    the exit state). The rest of ``batches`` is read and left. What the windows hold is
    counted against ``prototype``'s guard, from zero (a quiet stretch that the speculative
    scan, holding no partition, passed without a tick may tick here for every partition)."""
    tag, scanner = entry
    scanner = copy.deepcopy(scanner)
    scanner.held = copy.deepcopy(prototype.held)
    out = Records()
    n, met = 0, None
    with reported():
        for g, k, t, a, p, ta in batches:
            if met is not None:
                continue
            for i in range(len(g)):
                emitted = scanner.push(k[i], t[i], g[i], a[i], p[i], ta[i])
                if emitted:
                    out.windows(c, tag, g[i], emitted)
                n += 1
                if checks.get(n) is not None and scanner.digest() == checks[n]:
                    met = g[i]
                    break
    if met is not None:
        out.add(REPORT, c, tag, g=met)
    else:
        out.add(REPORT, c, tag, g=NEVER, state=state_bytes(scanner))
    return out


class Walk:
    """The driver's side: the state each chunk is entered with (see the module docstring).
    ``reports``: ``{c: (the digest of the chunk's empty state, its exit state's bytes)}`` for
    every non-empty chunk; ``prototype``: a scanner of the node (its policy)."""

    def __init__(self, reports: dict, prototype: SplScanner):
        self.prototype = prototype
        self.order = sorted(reports)
        self.empty = {c: d for c, (d, _) in reports.items()}
        self.exits = {c: self._state(s) for c, (_, s) in reports.items()}
        self.tags: dict = {}  # (c, entry digest) -> tag
        self.results: dict = {}  # (c, tag) -> (meeting point, exit state or None)

    def _state(self, blob) -> tuple:
        scanner = scanner_from(blob, self.prototype)
        return scanner.digest(), scanner

    def learn(self, c, tag, met, state) -> None:
        """The report of chunk ``c`` entered with ``tag``."""
        self.results[(c, tag)] = (met, None if state is None else self._state(state))

    def _tag(self, c, entry) -> int:
        return self.tags.setdefault((c, entry[0]), len(self.tags))

    def _walk(self):
        decisions = {}
        entry = None  # the first chunk's: the empty state
        for c in self.order:
            exit_ = self.exits[c]
            if entry is not None and entry[0] != self.empty[c]:
                tag = self._tag(c, entry)
                res = self.results.get((c, tag))
                if res is None:
                    return decisions, (c, entry)
                met, fixed = res
                decisions[c] = (tag, met)
                if fixed is not None:
                    exit_ = fixed
            entry = exit_
        return decisions, None

    def wanted(self) -> dict:
        """{chunk: (tag, entry scanner)} to correct next ({} when every chunk is settled): the
        first chunk whose entry is known but not scanned, and guesses for the chunks after."""
        _, missing = self._walk()
        if missing is None:
            return {}
        c, entry = missing
        out = {c: (self._tag(c, entry), entry[1])}
        i = self.order.index(c)
        for prev, nxt in zip(self.order[i:], self.order[i + 1:]):
            guess = self.exits[prev]
            if guess[0] != self.empty[nxt]:
                tag = self._tag(nxt, guess)
                if (nxt, tag) not in self.results:
                    out[nxt] = (tag, guess[1])
        return out

    def decisions(self) -> dict:
        """{chunk: (tag, meeting point)} for every chunk corrected: its speculative windows
        up to the meeting point are dropped, the corrected ones (with ``tag``) kept."""
        decisions, missing = self._walk()
        assert missing is None
        return decisions
