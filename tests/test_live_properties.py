"""Properties of the live runtime under producers coming and going, random bounds and trains,
late rows, checkpoints and replays: whatever happens, a query's results equal the batch algebra
on the rows that entered its streams, refused input changes nothing, and a restore followed by
a replay from the recorded positions is exactly-once."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sira
from sira import INT, Relation
from sira.streams import LateRowError, StreamEngine
from sira.streams.checkpoint import encode_content

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_live import CONSTANT, QUERIES  # noqa: E402

STREAMS = ("s", "r")
PAYLOAD = {"k": INT, "v": INT}

# One step of a workload, drawn abstractly; ``Workload`` turns it into concrete calls with
# rowtimes valid (or, for the late kinds, invalid) at the moment it runs.
_stream = st.sampled_from(STREAMS)
_slot = st.integers(0, 2)
_row = st.tuples(st.integers(0, 3), st.integers(0, 4))
step = st.one_of(
    st.tuples(st.just("insert"), _stream, _slot,
              st.lists(st.tuples(_row, st.integers(0, 3)), min_size=1, max_size=4)),
    st.tuples(st.just("bound"), _stream, _slot, st.integers(0, 4), st.booleans()),
    st.tuples(st.just("detach"), _stream, _slot),
    st.tuples(st.just("late"), _stream, _slot, _row, st.integers(0, 2)),
    st.tuples(st.just("newcomer"), _stream, _row, st.integers(0, 2)),
)


class Workload:
    """Runs abstract steps against an engine's streams, recording each accepted call in
    ``log`` (concrete and replayable: producer names, rows, rowtimes, sequence numbers)."""

    def __init__(self, engine, check_refusals=True):
        self.engine = engine
        self.slots = {(name, i): None for name in STREAMS for i in range(3)}
        self.count = 0
        self.log = []
        self.check_refusals = check_refusals

    def run(self, steps):
        for s in steps:
            getattr(self, s[0])(*s[1:])

    def _producer(self, stream, slot):
        p = self.slots[(stream, slot)]
        if p is None:
            self.count += 1
            name = f"{stream}{self.count}"
            p = self.slots[(stream, slot)] = self.engine.streams[stream].attach(name)
            self.log.append(("attach", stream, name))
        return p

    def _floor(self, stream, p):
        floors = [b for b in (p.position.bound, self.engine.streams[stream].passed_bound)
                  if b is not None]
        return max(floors, default=0)

    def insert(self, stream, slot, train):
        p = self._producer(stream, slot)
        t = self._floor(stream, p)
        items = []
        for (k, v), gap in train:
            t += gap
            items.append(({"k": k, "v": v}, t))
        seq = p.position.seq + 1
        if len(items) == 1:
            p.insert(*items[0])
        else:
            p.insert_many(items)
        self.log.append(("insert", stream, p.name, [[r["k"], r["v"], t] for r, t in items], seq))

    def bound(self, stream, slot, ahead, strict):
        p = self._producer(stream, slot)
        b = self._floor(stream, p) + ahead
        p.bound(b, strict=strict)
        self.log.append(("bound", stream, p.name, b, strict))

    def detach(self, stream, slot):
        p = self.slots[(stream, slot)]
        if p is not None:
            p.detach()
            self.slots[(stream, slot)] = None
            self.log.append(("detach", stream, p.name))

    def late(self, stream, slot, row, back):
        """A train whose last row is earlier than it may be: refused, nothing changed."""
        p = self.slots[(stream, slot)]
        if p is None:
            return
        floor = self._floor(stream, p)
        k, v = row
        train = [({"k": k, "v": v}, floor + 1)] * (back % 2) + [({"k": k, "v": v},
                                                                   floor - 1 - back)]
        if train[-1][1] < 0 and back % 2 == 0:
            return  # nothing to be late against at 0 on its own
        self._refused(lambda: p.insert_many(train))

    def newcomer(self, stream, row, back):
        """A producer attaching after the stream passed a bound on cannot insert before it."""
        passed = self.engine.streams[stream].passed_bound
        if passed is None or passed - 1 - back < 0:
            return
        self.count += 1
        p = self.engine.streams[stream].attach(f"{stream}{self.count}")
        k, v = row
        self._refused(lambda: p.insert({"k": k, "v": v}, passed - 1 - back))
        p.detach()  # it never inserted anything, so it changes nothing either

    def _refused(self, call):
        before = self.snapshot() if self.check_refusals else None
        with pytest.raises(LateRowError):
            call()
        if self.check_refusals:
            assert self.snapshot() == before, "a refused row changed something"

    def snapshot(self):
        return encode_content(list(self.engine.streams.values()), self.engine.queries)

    def end(self):
        for key, p in self.slots.items():
            if p is not None:
                p.detach()
                self.log.append(("detach", key[0], p.name))
                self.slots[key] = None


def new_engine(queries=QUERIES, fuse=True):
    engine = StreamEngine(fuse=fuse)
    for name in STREAMS:
        engine.create_stream(name, PAYLOAD)
    for text in queries:
        engine.register(text, {"t": CONSTANT})
    return engine


def record_rows(engine, into):
    """Collect every row leaving each stream (the batch algebra's input)."""
    for name, stream in engine.streams.items():
        stream.subscribe(lambda row, bound, n=name: row and into[n].append(dict(row)))


def assert_live_equals_batch(engine, rows):
    relvars = {name: Relation.from_rows(engine.streams[name].heading, rows[name])
               for name in STREAMS}
    relvars["t"] = CONSTANT
    for q in engine.queries:
        results = [tuple(sorted(r.items())) for r in q.results()]
        assert len(results) == len(set(results)), f"{q.node!r}: a result was emitted twice"
        assert q.relation() == sira.evaluate(q.node, relvars), repr(q.node)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@settings(max_examples=30, deadline=None)
@given(st.lists(step, max_size=30))
def test_live_equals_batch_with_producers_coming_and_going_and_late_rows_refused(fuse, steps):
    engine = new_engine(fuse=fuse)
    rows = {name: [] for name in STREAMS}
    record_rows(engine, rows)
    work = Workload(engine)
    work.run(steps)
    work.end()
    engine.finish()
    assert all(q.error is None for q in engine.queries)
    assert_live_equals_batch(engine, rows)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused-then-unfused",
                                                     "unfused-then-fused"])
@settings(max_examples=20, deadline=None)
@given(st.lists(step, max_size=30), st.integers(0, 30))
def test_live_equals_batch_across_a_checkpoint_and_restore(tmp_path_factory, fuse, steps, cut):
    """Restored with the other execution (fused or not): a checkpoint does not depend on it."""
    path = tmp_path_factory.mktemp("ckpt") / "engine.ckpt"
    engine = new_engine(fuse=fuse)
    rows = {name: [] for name in STREAMS}
    record_rows(engine, rows)
    work = Workload(engine, check_refusals=False)
    work.run(steps[:cut])
    engine.save(path)
    restored = StreamEngine.load(path, fuse=not fuse)
    assert encode_content(list(restored.streams.values()), restored.queries) == \
        encode_content(list(engine.streams.values()), engine.queries)
    record_rows(restored, rows)
    work.engine = restored
    work.slots = {key: None if p is None else restored.streams[key[0]].producer(p.name)
                  for key, p in work.slots.items()}
    work.check_refusals = True
    work.run(steps[cut:])
    work.end()
    restored.finish()
    assert all(q.error is None for q in restored.queries)
    assert_live_equals_batch(restored, rows)


# ------------------------------------------------------------------------------ exactly-once

def subscribe_outputs(engine):
    """Each query's results as they become final, in order (what a consumer downstream sees)."""
    outputs = [[] for _ in engine.queries]
    for out, q in zip(outputs, engine.queries):
        q.subscribe(lambda row, bound, out=out: out.append(json.dumps(row, default=repr,
                                                                      sort_keys=True)))
    return outputs


def replay(engine, log):
    """Replay a workload's whole log into a restored engine, from the positions the checkpoint
    recorded: rows carry their sequence numbers (those already accepted are skipped), bounds
    at or below a producer's recorded bound are stale, and producers that had detached are
    done."""
    at_restore = engine.position()
    handles = {}
    for op in log:
        kind, stream, name = op[:3]
        known = at_restore[stream].get(name)
        if known is not None and not known.attached:
            continue  # it had finished before the checkpoint
        if kind == "attach":
            handles[name] = (engine.streams[stream].producer(name) if known is not None
                             else engine.streams[stream].attach(name))
        elif kind == "insert":
            items = [({"k": k, "v": v}, t) for k, v, t in op[3]]
            handles[name].insert_many(items, seq=op[4])
        elif kind == "bound":
            if known is None or known.bound is None or op[3] > known.bound:
                handles[name].bound(op[3], strict=op[4])
        elif kind == "detach":
            handles[name].detach()
    engine.finish()


def exactly_once_run(steps, cut, crash, path, fuse=True):
    """(uninterrupted outputs, outputs up to the checkpoint, log) for a workload checkpointed
    after ``cut`` steps and "crashed" after ``crash`` more."""
    whole = new_engine()
    whole_out = subscribe_outputs(whole)
    complete = Workload(whole, check_refusals=False)
    complete.run(steps)
    complete.end()
    whole.finish()

    engine = new_engine(fuse=fuse)
    out = subscribe_outputs(engine)
    work = Workload(engine, check_refusals=False)
    work.run(steps[:cut])
    engine.save(path)
    before = [list(o) for o in out]
    work.run(steps[cut:cut + crash])  # lost in the crash, with whatever it emitted
    return whole_out, before, complete.log  # the source's whole input, to replay


def assert_exactly_once(whole_out, before, after):
    for q_text, w, b, a in zip(QUERIES, whole_out, before, after):
        joined = b + a
        assert len(joined) == len(set(joined)), f"{q_text}: a result was emitted twice"
        assert Counter(joined) == Counter(w), f"{q_text}: results lost or added"


@pytest.mark.parametrize("fuse", [True, False], ids=["fused-then-unfused",
                                                     "unfused-then-fused"])
@settings(max_examples=15, deadline=None)
@given(st.lists(step, max_size=30), st.integers(0, 30), st.integers(0, 10))
def test_restore_and_replay_from_the_positions_is_exactly_once(tmp_path_factory, fuse, steps,
                                                               cut, crash):
    path = tmp_path_factory.mktemp("ckpt") / "engine.ckpt"
    whole_out, before, log = exactly_once_run(steps, cut, crash, path, fuse)
    restored = StreamEngine.load(path, fuse=not fuse)
    after = subscribe_outputs(restored)
    replay(restored, log)
    assert_exactly_once(whole_out, before, after)


def test_restore_and_replay_in_a_new_process_is_exactly_once(tmp_path):
    steps = _random_steps(random.Random(7), 40)
    path = tmp_path / "engine.ckpt"
    whole_out, before, log = exactly_once_run(steps, 25, 8, path)
    script = f"""
import json, sys
sys.path.insert(0, {os.getcwd()!r})
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
from sira.streams import StreamEngine
from test_live_properties import replay, subscribe_outputs
engine = StreamEngine.load({str(path)!r})
after = subscribe_outputs(engine)
replay(engine, [tuple(op) for op in json.loads(sys.stdin.read())])
print(json.dumps(after))
"""
    env = dict(os.environ, PYTHONHASHSEED="4321")
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps(log),
                          capture_output=True, text=True, env=env, check=True)
    after = json.loads(done.stdout)
    assert sum(map(len, after)) > 0 and sum(map(len, before)) > 0
    assert_exactly_once(whole_out, before, after)


def _random_steps(rnd, n):
    """A fixed workload without hypothesis (for the subprocess test)."""
    out = []
    for _ in range(n):
        kind = rnd.choice(["insert", "insert", "insert", "bound", "detach"])
        stream, slot = rnd.choice(STREAMS), rnd.randrange(3)
        if kind == "insert":
            train = [((rnd.randrange(4), rnd.randrange(5)), rnd.randrange(4))
                     for _ in range(rnd.randrange(1, 4))]
            out.append(("insert", stream, slot, train))
        elif kind == "bound":
            out.append(("bound", stream, slot, rnd.randrange(5), rnd.random() < 0.5))
        else:
            out.append(("detach", stream, slot))
    return out
