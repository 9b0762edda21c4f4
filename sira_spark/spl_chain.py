"""The chain of a ``delta(a, D)`` policy over a stream split into chunks (seed 003, section 5).

A tumbling ``delta(a, D)`` window and a sliding window's ``delta(a, D)`` trigger follow the same
chain in each partition (key) of the stream: its first tuple is the first *member* (the start
of the first window, the trigger's first reference); the next member is the first later tuple
of the key whose a exceeds the member's a by more than D (``a - a_m > D``, computed as the
reference computes it). Each member depends on the previous one, so the chain is sequential;
this module finds it with the two-pass scheme, engine-free (``sira_spark/spl.py`` runs it in
Spark's Python workers):

* The stream's narrow rows (key, stream position g, a) are range-partitioned by (key, g) into
  *chunks*: a key's tuples are consecutive, a key may span several chunks, a chunk may hold
  several keys (its *runs*). Only a chunk's first run can continue a key from the previous
  chunk, and only its last run can go on into the next.
* First pass (:func:`first_pass`, per chunk, streaming): each run's chain, computed as if the
  key started there. It is exact for every run but a chunk's first run when its key continues
  from the previous chunk. For that run the pass follows, together, the chains from each of
  its first ``CANDIDATES`` *records* (rows whose a is above every earlier row's of the run):
  whatever member is open when the chunk starts, its chain's first member in the run is the
  first row whose a exceeds the open member's by more than D, which is a record. Chains that
  reach the same row are one chain from there on, so they are followed as *groups* (a heap
  by their last member's a: the groups a row extends are those with the smallest values),
  a member is reported once with its group, and a merge as the group it went into. The chunk
  reports its candidates (g, a, first group), its groups (what each went into, its last
  member), and one row: its first and last key, whether it is one run, whether its first
  run has records beyond the candidates, and its *exit*, the last member of its last run
  (the window open at its end, or the trigger's reference).
* The driver (:class:`Chain`, those reports) walks the chunks in order: a chunk whose key
  continues enters with the previous chunk's exit. Its first member is the first candidate
  whose a exceeds the entry's by more than D, and the members of its first run are those of
  the groups on that candidate's path; no candidate and no record beyond them: the entry's
  window spans the run. So on the shapes users have (a rising time, chains of every phase)
  one pass settles every chunk with no second pass. Only an entry past the candidates is
  *corrected* (:func:`correct`, a second pass over the chunks concerned): the chain from
  that entry and the speculative one (candidate 0's) are walked side by side over the run
  until they meet; the speculative members before the meeting row are dropped, the
  corrected ones kept, and the exit stays the speculative one unless they never met in a
  chunk of one run. Entries not known yet are guessed (the previous chunk's speculative
  exit, and the entry of a window that may span the chunks in between), so one round
  usually settles every chunk; a wrong guess costs one more round.

Cost: one pass over the rows (a heap of at most ``CANDIDATES`` groups), the driver's walk over
a few rows per chunk, and for each corrected chunk a walk of its first run until the chains
meet (chains from different starts meet at the first row exceeding both thresholds) -- the
whole run only where one window spans the chunk.
"""

from __future__ import annotations

NEVER = 2 ** 62  # a drop point past every row: every speculative member of the run goes

#: the records of a chunk's first run whose chains the first pass follows
CANDIDATES = 1024

#: kinds of records
MEMBER, REPORT, CANDIDATE, GROUP = 0, 2, 3, 4


def record_schema(a_type: str) -> str:
    """The Spark schema of the records: members (``kind`` 0: chunk, g, whether in the chunk's
    first run, ``tag``: its group there or the entry a correction computed it for, else -1),
    reports (``kind`` 2: chunk, first and last key, one run or not, exit g and a; for a first
    pass the largest a of the last run and whether the first run has records past the
    candidates (``more``); for a correction the entry, the drop point and whether the chains
    met), candidates (``kind`` 3: chunk, index ``tag``, g, ``a``, first group ``grp``) and
    groups (``kind`` 4: chunk, ``grp``, the group it went into ``into`` or null, its last
    member ``eg``, ``ea``)."""
    return (f"kind int, c long, g long, spec boolean, tag long, fk string, lk string, "
            f"single boolean, eg long, ea {a_type}, drop long, met boolean, mx {a_type}, "
            f"more boolean, a {a_type}, grp long, into long")


def _member(c, g, spec, tag=-1):
    return (MEMBER, c, g, spec, tag, None, None, None, None, None, None, None, None,
            None, None, None, None)


def _report(c, fk, lk, single, eg, ea, tag=-1, drop=None, met=None, mx=None, more=None):
    return (REPORT, c, None, None, tag, fk, lk, single, eg, ea, drop, met, mx,
            more, None, None, None)


def _candidate(c, index, g, a, grp):
    return (CANDIDATE, c, g, None, index, None, None, None, None, None, None, None, None,
            None, a, grp, None)


def _group(c, grp, into, eg, ea):
    return (GROUP, c, None, None, -1, None, None, None, eg, ea, None, None, None,
            None, None, grp, into)


class _Sweep:
    """The chains from the first ``limit`` records of a run, followed together over its rows
    (:func:`first_pass`). A group: ``[last member's a, its g, id, the group it went into]``;
    ``heap``: (a, id, group) of the groups alive."""

    __slots__ = ("c", "delta", "limit", "heap", "groups", "top", "candidates", "more")

    def __init__(self, c, delta, limit: int):
        self.c, self.delta, self.limit = c, delta, limit
        self.heap: list = []
        self.groups: list = []
        self.top = None  # the largest a so far
        self.candidates: list = []  # (g, a, first group id)
        self.more = False  # a record past the candidates

    def push(self, g, a, out: list) -> None:
        import heapq
        heap, delta = self.heap, self.delta
        taken = []
        while heap and a - heap[0][0] > delta:
            taken.append(heapq.heappop(heap)[2])
        record = self.top is None or a > self.top
        if record:
            self.top = a
            if len(self.candidates) >= self.limit:
                self.more, record = True, False
        if not taken and not record:
            return
        if len(taken) == 1 and not record:
            group = taken[0]  # one chain goes on
        else:
            group = [None, None, len(self.groups), None]
            self.groups.append(group)
            for old in taken:
                old[3] = group[2]
            if record:
                self.candidates.append((g, a, group[2]))
        group[0], group[1] = a, g
        heapq.heappush(heap, (a, group[2], group))
        out.append(_member(self.c, g, True, group[2]))

    def exit_of_first(self) -> tuple:
        """The last member of candidate 0's chain (the speculative one)."""
        group = self.groups[self.candidates[0][2]]
        while group[3] is not None:
            group = self.groups[group[3]]
        return group[1], group[0]

    def records(self) -> list:
        return ([_candidate(self.c, i, g, a, grp) for i, (g, a, grp) in
                 enumerate(self.candidates)] +
                [_group(self.c, grp[2], grp[3], grp[1], grp[0]) for grp in self.groups])


def first_pass(c, rows, delta, limit: int = CANDIDATES):
    """Records of chunk ``c``'s first pass; ``rows``: (key, g, a) in (key, g) order, an
    iterable of lists (batches); ``limit``: the candidates its first run follows."""
    out = []
    fk = lk = None
    mg = ma = None  # the current run's last member (runs after the first)
    mx = None  # the current run's largest a
    runs = 0
    sweep = _Sweep(c, delta, limit)
    for keys, gs, values in rows:
        for k, g, a in zip(keys, gs, values):
            if k != lk:
                runs += 1
                if fk is None:
                    fk = k
                lk, mg, ma, mx = k, g, a, a
                if runs == 1:
                    sweep.push(g, a, out)
                else:
                    out.append(_member(c, g, False))
                continue
            if a > mx:
                mx = a
            if runs == 1:
                sweep.push(g, a, out)
            elif a - ma > delta:
                mg, ma = g, a
                out.append(_member(c, g, False))
        yield out
        out = []
    if runs:
        if runs == 1:
            mg, ma = sweep.exit_of_first()
        yield sweep.records() + [_report(c, fk, lk, runs == 1, mg, ma, mx=mx, more=sweep.more)]


def correct(c, first_run, entries, delta):
    """Records of chunk ``c`` entered with each of ``entries`` ((g, a) of the member open at
    its start): the corrected members before the chains meet (tagged with the entry's g) and a
    report (drop point, and the exit when they never meet). ``first_run``: (gs, values) of the
    chunk's first run."""
    gs, values = first_run
    out = []
    for eg, ea in entries:
        sa = None  # the speculative chain's last member's a
        ca = ea  # the corrected chain's
        cg = eg
        drop, met = NEVER, False
        for g, a in zip(gs, values):
            spec = sa is None or a - sa > delta
            if spec:
                sa = a
            if a - ca > delta:
                if spec:
                    drop, met = g, True
                    break
                out.append(_member(c, g, False, eg))
                ca, cg = a, g
        out.append(_report(c, None, None, None, None if met else cg, None if met else ca,
                           tag=eg, drop=drop, met=met))
    return out


class Chain:
    """The driver's side: which member is open at each chunk's start, and which members of
    its first run stand (see the module docstring). ``reports``: the first pass's report of
    each non-empty chunk, ``{c: (first key, last key, one run, exit g, exit a, the last
    run's largest a, records past the candidates)}``; ``candidates``: ``{c: [(g, a, first
    group), ...]}`` in order; ``groups``: ``{c: {group: (the group it went into or None,
    last member g, a)}}``; ``delta``: the policy's D."""

    def __init__(self, reports: dict, delta, candidates: dict, groups: dict):
        self.reports = reports
        self.delta = delta
        self.candidates = candidates
        self.groups = groups
        self.order = sorted(reports)
        self.results: dict = {}  # (c, entry g) -> (drop, exit or None: the speculative one)

    def learn(self, c, tag, drop, exit_) -> None:
        self.results[(c, tag)] = (drop, exit_)

    def _path(self, c, group) -> list:
        """The groups a chain goes through from ``group`` to the end of ``c``'s first run."""
        path = [group]
        while self.groups[c][path[-1]][0] is not None:
            path.append(self.groups[c][path[-1]][0])
        return path

    def _lookup(self, c, entry):
        """What the chain entering ``c`` with ``entry`` does in its first run, from the
        candidates: ``("chain", t)`` (its first member is candidate t), ``("none",)`` (no
        member: the entry's window spans the run) or None (past the candidates: correct it).
        The first candidate whose a exceeds the entry's by more than D, by bisection (the
        candidates' a rise, and ``a - ea`` with them, as the reference computes it)."""
        cands = self.candidates.get(c, [])
        ea, delta = entry[1], self.delta
        lo, hi = 0, len(cands)
        while lo < hi:
            mid = (lo + hi) // 2
            if cands[mid][1] - ea > delta:
                hi = mid
            else:
                lo = mid + 1
        if lo < len(cands):
            return ("chain", lo)
        return None if self.reports[c][6] else ("none",)

    def _walk(self):
        decisions = {}
        carried = prev_lk = None
        for c in self.order:
            fk, lk, single, eg, ea, _, _ = self.reports[c]
            exit_ = (eg, ea)
            if prev_lk is not None and fk == prev_lk:
                found = self._lookup(c, carried)
                if found is None:
                    res = self.results.get((c, carried[0]))
                    if res is None:
                        return decisions, (c, carried)
                    drop, fixed = res
                    decisions[c] = ("corrected", carried[0], drop)
                    if single and fixed is not None:
                        exit_ = fixed
                else:
                    decisions[c] = found
                    if single:
                        exit_ = carried if found[0] == "none" else self._exit(c, found[1])
            carried, prev_lk = exit_, lk
        return decisions, None

    def _exit(self, c, t) -> tuple:
        """The last member of candidate t's chain in ``c``."""
        last = self._path(c, self.candidates[c][t][2])[-1]
        return self.groups[c][last][1:]

    def wanted(self) -> dict:
        """{chunk: [entries]} to correct next ({} when every chunk is settled): the first
        chunk whose entry is known, past its candidates and not computed, and guesses for the
        chunks after it."""
        _, missing = self._walk()
        if missing is None:
            return {}
        out = {missing[0]: [missing[1]]}
        spans = missing[1]  # a window open across the chunks of one run that follow
        i = self.order.index(missing[0])
        for prev, c in zip(self.order[i:], self.order[i + 1:]):
            fk = self.reports[c][0]
            p_fk, p_lk, p_single, p_eg, p_ea, p_mx, _ = self.reports[prev]
            if fk != p_lk:
                spans = None
                continue
            guesses = [(p_eg, p_ea)]
            # the window may span ``prev`` only if no value of it exceeds its start's by D
            if spans is not None and p_single and not p_mx - spans[1] > self.delta:
                guesses.append(spans)
            else:
                spans = None
            got = [e for e in dict.fromkeys(guesses) if (c, e[0]) not in self.results
                   and self._lookup(c, e) is None]
            if got:
                out[c] = got
        return out

    def kept(self) -> tuple:
        """What stands once every chunk is settled: ``([(c, group, from g), ...], {c: entry
        g})``: the members of ``c``'s first run in ``group`` from position ``from g`` on
        (-1: all), and the chunks whose corrected members stand, with the entry they were
        corrected for."""
        decisions, missing = self._walk()
        assert missing is None
        groups, corrected = [], {}
        for c in self.order:
            if c not in self.candidates:
                continue
            d = decisions.get(c, ("chain", 0))
            if d[0] == "none":
                continue
            if d[0] == "corrected":
                corrected[c] = d[1]
                t, start = 0, d[2]
            else:
                t, start = d[1], -1
            groups += [(c, grp, start) for grp in self._path(c, self.candidates[c][t][2])]
        return groups, corrected
