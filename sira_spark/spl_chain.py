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
  from the previous chunk: those members are *speculative*. The chunk reports one row: its
  first and last key, whether it is one run, and its *exit*, the last member of its last run
  (the window open at its end, or the trigger's reference).
* The driver (:class:`Chain`, one report per chunk) walks the chunks in order: a chunk whose
  key continues enters with the previous chunk's exit. The chain from that entry is the chain
  from the first row of the chunk whose a exceeds the entry's a by more than D; from the first
  row that is a member of both chains on, both chains are the same (a member's successors
  depend on the member only). :func:`correct` (a second pass over the chunks concerned, usually
  one round for all of them) walks the two chains side by side over the chunk's first run until
  they meet: the speculative members before the meeting row are dropped, the corrected ones
  kept, and the exit stays the speculative one unless the chains never met in a chunk of one
  run. Entries the driver does not know yet are guessed (the previous chunk's speculative exit,
  and the entry of a window that may span the chunks in between), so one round usually settles
  every chunk; a wrong guess costs one more round.

Cost: one pass over the rows, and for each corrected chunk a walk of its first run until the
chains meet (chains from different starts meet at the first row exceeding both thresholds) --
the whole run only where one window spans the chunk. The driver holds one report per chunk.
"""

from __future__ import annotations

NEVER = 2 ** 62  # a drop point past every row: every speculative member of the run goes

#: kinds of records
MEMBER, REPORT = 0, 2


def record_schema(a_type: str) -> str:
    """The Spark schema of the records: members (``kind`` 0: chunk, g, speculative flag, the
    entry they were computed for or -1) and reports (``kind`` 2: chunk, first and last key,
    one run or not, exit g and a, and for a correction the entry, drop point and whether the
    chains met; for a first pass the largest a of the chunk's last run)."""
    return (f"kind int, c long, g long, spec boolean, tag long, fk string, lk string, "
            f"single boolean, eg long, ea {a_type}, drop long, met boolean, mx {a_type}")


def _member(c, g, spec, tag=-1):
    return (MEMBER, c, g, spec, tag, None, None, None, None, None, None, None, None)


def _report(c, fk, lk, single, eg, ea, tag=-1, drop=None, met=None, mx=None):
    return (REPORT, c, None, None, tag, fk, lk, single, eg, ea, drop, met, mx)


def first_pass(c, rows, delta):
    """Records of chunk ``c``'s first pass; ``rows``: (key, g, a) in (key, g) order, an
    iterable of lists (batches)."""
    out = []
    fk = lk = None
    mg = ma = None  # the current run's last member
    mx = None  # the current run's largest a
    runs = 0
    for keys, gs, values in rows:
        for k, g, a in zip(keys, gs, values):
            if k != lk:
                runs += 1
                if fk is None:
                    fk = k
                lk, mg, ma, mx = k, g, a, a
                out.append(_member(c, g, runs == 1))
                continue
            if a > mx:
                mx = a
            if a - ma > delta:
                mg, ma = g, a
                out.append(_member(c, g, runs == 1))
        yield out
        out = []
    if runs:
        yield [_report(c, fk, lk, runs == 1, mg, ma, mx=mx)]


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
    """The driver's side: which member is open at each chunk's start (see the module
    docstring). ``reports``: the first pass's report of each non-empty chunk,
    ``{c: (first key, last key, one run, exit g, exit a, the last run's largest a)}``;
    ``delta``: the policy's D."""

    def __init__(self, reports: dict, delta):
        self.reports = reports
        self.delta = delta
        self.order = sorted(reports)
        self.results: dict = {}  # (c, entry g) -> (drop, exit or None: the speculative one)

    def learn(self, c, tag, drop, exit_) -> None:
        self.results[(c, tag)] = (drop, exit_)

    def _walk(self):
        decisions = {}
        carried = prev_lk = None
        for c in self.order:
            fk, lk, single, eg, ea, _ = self.reports[c]
            exit_ = (eg, ea)
            if prev_lk is not None and fk == prev_lk:
                res = self.results.get((c, carried[0]))
                if res is None:
                    return decisions, (c, carried)
                drop, fixed = res
                decisions[c] = (carried[0], drop)
                if single and fixed is not None:
                    exit_ = fixed
            carried, prev_lk = exit_, lk
        return decisions, None

    def wanted(self) -> dict:
        """{chunk: [entries]} to correct next ({} when every chunk is settled): the first
        chunk whose entry is known but not computed, and guesses for the chunks after it."""
        _, missing = self._walk()
        if missing is None:
            return {}
        out = {missing[0]: [missing[1]]}
        spans = missing[1]  # a window open across the chunks of one run that follow
        i = self.order.index(missing[0])
        for prev, c in zip(self.order[i:], self.order[i + 1:]):
            fk = self.reports[c][0]
            p_fk, p_lk, p_single, p_eg, p_ea, p_mx = self.reports[prev]
            if fk != p_lk:
                spans = None
                continue
            guesses = [(p_eg, p_ea)]
            # the window may span ``prev`` only if no value of it exceeds its start's by D
            if spans is not None and p_single and not p_mx - spans[1] > self.delta:
                guesses.append(spans)
            else:
                spans = None
            got = [e for e in dict.fromkeys(guesses) if (c, e[0]) not in self.results]
            if got:
                out[c] = got
        return out

    def decisions(self) -> dict:
        """{chunk: (entry g, drop point)} for every chunk entered with an open member."""
        decisions, missing = self._walk()
        assert missing is None
        return decisions
