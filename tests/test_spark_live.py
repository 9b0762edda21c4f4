"""Live queries on Spark Structured Streaming (``sira_spark.live``): the same query on the same
input -- files appended as micro-batches, with heartbeat bounds and late rows -- gives on Spark
exactly the rows sira's own live runtime gives; late rows are counted and change nothing; a
query stopped in the middle of its input and started again from its checkpoint continues with
no lost and no duplicated output; what cannot run continuously is refused by name.

Each Spark run reads every input file as its own micro-batch (``maxFilesPerTrigger=1``) in one
``availableNow`` run, so the test stays quick and deterministic."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

pytest.importorskip("pyspark")

from sira import INT, Relation  # noqa: E402
from sira.streams import NotSupportedLive, StreamEngine  # noqa: E402

SCHEMA = "k int, v int, ts long, seq long, is_bound boolean"
CONSTANT = Relation.from_rows({"k": INT, "w": INT}, [{"k": 0, "w": 10}, {"k": 1, "w": 11},
                                                     {"k": 1, "w": 12}, {"k": 3, "w": 13}])

# micro-batches per stream: rows (k, v, ts) and ("bound", t) heartbeats; rows earlier than the
# stream's bound when their batch arrives are late
BATCHES = [
    {"s": [(1, 5, 10), (2, 3, 12), (0, 4, 12)], "r": [(1, 1, 11)]},
    {"s": [(1, 1, 14), (2, 2, 15), (1, 4, 20), (3, 3, 21)], "r": [(2, 6, 13), ("bound", 22)]},
    {"s": [(2, 7, 25), (0, 1, 26), ("bound", 31)], "r": [(1, 2, 24), (0, 5, 30)]},
    {"s": [(1, 2, 33), (2, 2, 36), (1, 1, 44)], "r": [(3, 1, 35), (1, 1, 41)]},
    {"s": [("bound", 90)], "r": [("bound", 90)]},
]
LATE = [
    {"s": [(1, 5, 10), (2, 3, 12)]},
    {"s": [(1, 1, 14), (2, 2, 11), (1, 4, 20)]},            # 11 < 12: late
    {"s": [(2, 7, 25), (1, 9, 19), (0, 3, 20), ("bound", 30)]},  # 19 late; 20 is on time
    {"s": [(1, 1, 29), (1, 2, 31), ("bound", 80)]},          # 29 < 30: late
]

DIFFERENTIAL = {
    "filter": "restrict(s, gt(v, 2))",
    "range window, per-key running sum as changes":
        "changes(summarizebyusing(window(s, ts, range(10)), (k, during), (total(plus(v))),"
        " (during)), at)",
    "slide window with istream": "istream(project(window(s, ts, range(10) slide(5)),"
                                 " (k, v, during)), at)",
    "hop window table aggregate": "summarizeby(hop(s, ts, size(10) slide(5)), (window_start,"
                                  " window_end, k), (total(plus(v)) n(plus(1))))",
    "session window table": "summarizeby(session(s, ts, gap(4) partition(k)), (window_start,"
                            " window_end, k), (total(plus(v))))",
    "union of two streams": "union(project(s, (k, v, ts)), project(r, (k, v, ts)))",
    "join of a window with a static relation": "changes(join(project(window(s, ts, range(8)),"
                                               " (k, v, during)), t), at)",
    "partitioned rows window with dstream": "dstream(project(window(s, ts, partition(k)"
                                            " rows(2)), (k, v, during)), at)",
    "rows window over the whole stream (one key)": "changes(window(s, ts, rows(3)), at)",
}


@pytest.fixture(scope="module")
def engine():
    from sira_spark import default_engine
    return default_engine()


class Files:
    """Input streams as JSON-lines files, one file per micro-batch, in arrival order."""

    def __init__(self, root, names=("s", "r")):
        self.root = root
        self.count = 0
        self.seq = {n: 0 for n in names}
        for n in names:
            os.makedirs(root / n, exist_ok=True)

    def write(self, name, rows):
        records = []
        for row in rows:
            if row[0] == "bound":
                records.append({"k": 0, "v": 0, "ts": row[1], "seq": 0, "is_bound": True})
            else:
                k, v, ts, seq = row
                records.append({"k": k, "v": v, "ts": ts, "seq": seq, "is_bound": False})
        path = self.root / name / f"batch-{self.count:04d}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        os.utime(path, (1_000_000 + self.count, 1_000_000 + self.count))  # arrival order
        self.count += 1


class Reference:
    """sira's own live runtime fed the same micro-batches: each batch's on-time rows as one
    train (in rowtime order, numbered as they are accepted), then its heartbeat."""

    def __init__(self, text, names=("s", "r")):
        self.engine = StreamEngine()
        self.streams = {n: self.engine.create_stream(n, {"k": INT, "v": INT}) for n in names}
        self.query = self.engine.register(text, {"t": CONSTANT})
        self.producers = {n: s.attach(n) for n, s in self.streams.items()}
        self.late = 0

    def batch(self, name, rows):
        """The rows of one micro-batch with the sequence numbers sira gives them (0: late)."""
        stream, producer = self.streams[name], self.producers[name]
        floor = stream.passed_bound
        data = [r for r in rows if r[0] != "bound"]
        on_time = sorted((r for r in data if floor is None or r[2] >= floor), key=lambda r: r[2])
        numbered = [(k, v, ts, stream.seq + i + 1) for i, (k, v, ts) in enumerate(on_time)]
        if numbered:
            producer.insert_many([({"k": k, "v": v}, ts) for k, v, ts, _ in numbered])
        self.late += len(data) - len(on_time)
        for row in rows:
            if row[0] == "bound":
                producer.bound(row[1])
        late = [(k, v, ts, 0) for k, v, ts in data if floor is not None and ts < floor]
        return numbered + late + [r for r in rows if r[0] == "bound"]

    def rows(self):
        names = self.query.heading.names
        return Counter(tuple(r[n] for n in names) for r in self.query.results())


def start(engine, text, files, checkpoint, sink, names=("s", "r"), sink_options=None):
    from sira_spark.live import LiveSource
    sources = {n: LiveSource(engine.spark.readStream.schema(SCHEMA)
                             .option("maxFilesPerTrigger", 1).json(str(files.root / n)),
                             rowtime="ts", punctuation="is_bound")
               for n in names if os.listdir(files.root / n)}
    return engine.stream(text, sources, sink=sink, checkpoint=str(checkpoint),
                         trigger={"availableNow": True}, relvars={"t": CONSTANT},
                         sink_options=sink_options)


def collector():
    """A foreachBatch sink keeping each micro-batch's rows by batch id (idempotent)."""
    out = {}

    def sink(df, batch_id):
        out[batch_id] = [tuple(r) for r in df.collect()]
    return out, sink


def run_both(engine, tmp_path, text, batches):
    reference = Reference(text)
    files = Files(tmp_path / "in")
    for batch in batches:
        for name, rows in batch.items():
            files.write(name, reference.batch(name, rows))
    out, sink = collector()
    q = start(engine, text, files, tmp_path / "ck", sink,
              names=sorted({n for b in batches for n in b}))
    q.query.awaitTermination()
    got = Counter(row for rows in out.values() for row in rows)
    return reference, q, got


@pytest.mark.parametrize("text", list(DIFFERENTIAL.values()), ids=list(DIFFERENTIAL))
def test_spark_gives_the_rows_of_the_live_runtime(engine, tmp_path, text):
    reference, q, got = run_both(engine, tmp_path, text, BATCHES)
    expected = reference.rows()
    assert expected, "the case produces output"
    assert got == expected
    assert max(got.values()) == 1, "a row was emitted twice"


def test_late_rows_are_counted_and_change_no_result(engine, tmp_path):
    text = DIFFERENTIAL["range window, per-key running sum as changes"]
    reference, q, got = run_both(engine, tmp_path, text, LATE)
    assert reference.late == 3
    assert q.late_rows == 3
    assert got == reference.rows()


def test_a_restart_from_the_checkpoint_loses_and_repeats_nothing(engine, tmp_path):
    text = DIFFERENTIAL["range window, per-key running sum as changes"]
    reference = Reference(text)
    files = Files(tmp_path / "in")
    out_dir, checkpoint = tmp_path / "out", tmp_path / "ck"

    def run():
        q = start(engine, text, files, checkpoint, "parquet", sink_options={"path": out_dir})
        q.query.awaitTermination()

    def write(batches):
        for batch in batches:
            for name, rows in batch.items():
                files.write(name, reference.batch(name, rows))

    write(BATCHES[:2])
    run()  # stops when the first half is in
    first = engine.spark.read.parquet(str(out_dir)).count()
    write(BATCHES[2:])
    run()  # the same query again, from its checkpoint
    names = reference.query.heading.names
    got = Counter(tuple(r[n] for n in names)
                  for r in engine.spark.read.parquet(str(out_dir)).collect())
    assert 0 < first < sum(got.values())
    assert got == reference.rows()


@pytest.mark.parametrize("operator", sorted(__import__("sira_spark.live", fromlist=["x"])
                                            .UNSUPPORTED))
def test_what_cannot_run_continuously_is_refused_by_name(engine, tmp_path, operator):
    from sira_spark.live import UNSUPPORTED, LiveSource, compile_live
    example, _ = UNSUPPORTED[operator]
    files = Files(tmp_path / "in")
    sources = {n: LiveSource(engine.spark.readStream.schema(SCHEMA).json(str(files.root / n)),
                             rowtime="ts", punctuation="is_bound") for n in ("s", "r")}
    with pytest.raises(NotSupportedLive) as err:
        compile_live(engine, example, sources)
    assert operator.lower() in str(err.value).lower()


def test_the_state_is_partitioned_by_what_the_query_keeps_apart(engine, tmp_path):
    from sira_spark.live import LiveSource, compile_live
    files = Files(tmp_path / "in")
    sources = {n: LiveSource(engine.spark.readStream.schema(SCHEMA).json(str(files.root / n)),
                             rowtime="ts", punctuation="is_bound") for n in ("s", "r")}
    assert compile_live(engine, DIFFERENTIAL["range window, per-key running sum as changes"],
                        sources).key == ("k",)
    assert compile_live(engine, "changes(window(s, ts, rows(3)), at)", sources).key == ()
    assert compile_live(engine, "restrict(s, gt(v, 2))", sources).key == ("k", "seq", "ts", "v")


def test_a_rowtime_that_is_not_an_integer_is_refused(engine, tmp_path):
    from sira.errors import SiraTypeError
    from sira_spark.live import LiveSource, compile_live
    files = Files(tmp_path / "in", names=("s",))
    df = engine.spark.readStream.schema("k int, ts string").json(str(files.root / "s"))
    with pytest.raises(SiraTypeError, match="rowtime column 'ts'"):
        compile_live(engine, "restrict(s, gt(k, 1))", {"s": LiveSource(df, rowtime="ts")})
