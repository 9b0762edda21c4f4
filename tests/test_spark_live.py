"""Live queries on Spark Structured Streaming (``sira_spark.live``): the same query on the same
input -- files appended as micro-batches, with heartbeat bounds and late rows -- gives on Spark
exactly the rows sira's own live runtime gives, on every path it can take (native operators,
the vectorised handler, the general handler running the live runtime's operators); late rows
are counted, handed to ``late_rows_sink`` and change nothing; a row repeated in a later
micro-batch is one element; a query stopped in the middle of its input and started again from
its checkpoint continues with no lost and no duplicated output; what cannot run continuously is
refused by name.

Each Spark run reads every input file as its own micro-batch (``maxFilesPerTrigger=1``) in one
``availableNow`` run; the queries of a test run side by side over the same files, so the test
stays quick and deterministic. The vectorised kernel is also compared with the live runtime on
random input, without Spark."""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")

import numpy as np  # noqa: E402

import sira  # noqa: E402
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
#: the late rows of LATE: (rowtime, the bound they were judged against, k, v)
LATE_ROWS = {(11, 12, 2, 2), (19, 20, 1, 9), (29, 30, 1, 1)}

RUNNING_SUM = ("changes(summarizebyusing(window(s, ts, range(10)), (k, during), "
               "(total(plus(v))), (during)), at)")
HOP = ("summarizeby(hop(s, ts, size(10) slide(5)), (window_start, window_end, k), "
       "(total(plus(v)) n(plus(1))))")

SESSIONS = ("project(windowby(s, partition(k) order(ts) tumbling, start(as(a) at(sp)), end(at(ep)"
            " next(n) when(or(is_missing(n), gt(minus(n.ts, a.ts), 6)))),"
            " aggregates(total(sum(w, v)))), (k, sp, ep, closed, total))")

#: name -> (query, the path "auto" picks, the other paths compared with the live runtime)
CASES = {
    "filter and a join with a constant relation (native)":
        ("join(restrict(s, gt(v, 1)), t)", "native", ()),
    "semiminus, extend, rename and project of a stream (native)":
        ("project(rename(extend(semiminus(s, t), (w2(mult(v, 2)))), (v, value)),"
         " (k, value, w2, ts))", "native", ("general",)),
    "hop window table aggregate (native)": (HOP, "native", ("general",)),
    "tumble window table with an offset, max, min and window_time (native)":
        ("summarizeby(tumble(s, ts, size(10) offset(3)), (window_start, window_end, window_time,"
         " k), (hi(max(v)) lo(min(v)) n(plus(1))))", "native", ()),
    "session window table, a row at exactly last + gap joining (native)":
        ("summarizeby(session(s, ts, gap(4) partition(k)), (window_start, window_end, k),"
         " (total(plus(v))))", "native", ()),
    "range window, per-key running sum as changes (vectorised)":
        (RUNNING_SUM, "vectorised", ("general",)),
    "slide window, per-key sum and count as dstream (vectorised)":
        ("dstream(summarizebyusing(window(s, ts, range(10) slide(4)), (k, during),"
         " (total(plus(v)) n(plus(1))), (during)), at)", "vectorised", ("general",)),
    "now window, per-key count as istream (vectorised)":
        ("istream(summarizebyusing(window(s, ts, now), (k, during), (n(plus(1))), (during)),"
         " at)", "vectorised", ()),
    "unbounded window, one global sum as changes (vectorised)":
        ("changes(summarizebyusing(window(s, ts, range(unbounded)), (during), (total(plus(v))),"
         " (during)), at)", "vectorised", ()),
    "cumulate window table aggregate per key (general)":
        ("summarizeby(cumulate(s, ts, step(5) size(15)), (window_start, window_end, k),"
         " (total(plus(v))))", "general", ()),
    "slide window with istream": ("istream(project(window(s, ts, range(10) slide(5)),"
                                  " (k, v, during)), at)", "general", ()),
    "union of two streams": ("union(project(s, (k, v, ts)), project(r, (k, v, ts)))",
                             "general", ()),
    "join of a window with a static relation": ("changes(join(project(window(s, ts, range(8)),"
                                                " (k, v, during)), t), at)", "general", ()),
    "partitioned rows window with dstream": ("dstream(project(window(s, ts, partition(k)"
                                             " rows(2)), (k, v, during)), at)", "general", ()),
    "SPL sliding count window per partition, its tuples ungrouped (general)":
        ("ungroup(project(splwindow(s, ts, sliding, count(3) trigger(count(2)) partitioned(k)),"
         " (instance, at, tuples)), tuples)",
         "general", ()),
    "SPL tumbling time window, one timer for every partition (general, one key)":
        ("project(splwindow(s, ts, tumbling, time(10) partitioned(k)), (k, instance, at))",
         "general", ()),
    "WindowBy sessions per partition with a pushed-down sum (general)":
        (SESSIONS, "general", ()),
}


@pytest.fixture(scope="module")
def engine():
    """The run's shared engine; the live queries here shuffle into 2 partitions (Spark keeps a
    query's number in its checkpoint), the other tests' setting is restored afterwards."""
    from sira_spark import default_engine
    engine = default_engine()
    conf = engine.spark.conf
    before = conf.get("spark.sql.shuffle.partitions")
    conf.set("spark.sql.shuffle.partitions", "2")
    yield engine
    conf.set("spark.sql.shuffle.partitions", before)


class Files:
    """Input streams as JSON-lines files, one file per micro-batch, in arrival order."""

    def __init__(self, root, names=("s", "r")):
        self.root = root
        self.count = 0
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

    def __init__(self, texts, names=("s", "r")):
        self.engine = StreamEngine()
        self.streams = {n: self.engine.create_stream(n, {"k": INT, "v": INT}) for n in names}
        self.queries = {text: self.engine.register(text, {"t": CONSTANT}) for text in texts}
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

    def rows(self, text):
        query = self.queries[text]
        names = query.heading.names
        return Counter(tuple(r[n] for n in names) for r in query.results())


def start(engine, text, files, checkpoint, sink, names=("s", "r"), sink_options=None,
          path="auto", late_rows_sink=None, per_trigger=1):
    from sira_spark.live import LiveSource
    sources = {n: LiveSource(engine.spark.readStream.schema(SCHEMA)
                             .option("maxFilesPerTrigger", per_trigger)
                             .json(str(files.root / n)),
                             rowtime="ts", punctuation="is_bound")
               for n in names if os.listdir(files.root / n)}
    return engine.stream(text, sources, sink=sink, checkpoint=str(checkpoint),
                         trigger={"availableNow": True}, relvars={"t": CONSTANT},
                         sink_options=sink_options, path=path, late_rows_sink=late_rows_sink)


def collector():
    """A foreachBatch sink keeping each micro-batch's rows by batch id (idempotent)."""
    out = {}

    def sink(df, batch_id):
        out[batch_id] = [tuple(r) for r in df.collect()]
    return out, sink


class Run:
    """One query on one path, started over the shared input files."""

    def __init__(self, text, path="auto", late_rows=False):
        self.text, self.path, self.keep_late = text, path, late_rows
        self.out, self.sink = collector()
        self.late_out, self.late_sink = collector() if late_rows else (None, None)
        self.query = None

    @property
    def rows(self) -> Counter:
        return Counter(row for rows in self.out.values() for row in rows)

    @property
    def late_rows(self) -> set:
        return {row for rows in self.late_out.values() for row in rows}


def run_side_by_side(engine, root, runs, batches, repeat=None, per_trigger=1):
    """Write ``batches``, run each run over them, one after the other (quicker than side by
    side on two cores); the reference. ``repeat`` maps (batch index, stream) to the rows
    (batch index, row index) of that stream written again in that batch (with the same
    sequence number: the same element); ``per_trigger`` files of a stream make a micro-batch
    (more than one only for batches without late rows: each file's rows are judged against
    the bound before the micro-batch)."""
    reference = Reference(sorted({r.text for r in runs}))
    files = Files(root / "in")
    written = {}
    for i, batch in enumerate(batches):
        for name, rows in batch.items():
            written[(i, name)] = reference.batch(name, rows)
            again = [written[(j, name)][k] for j, k in (repeat or {}).get((i, name), ())]
            files.write(name, written[(i, name)] + again)
    names = sorted({n for b in batches for n in b})
    for i, run in enumerate(runs):
        run.query = start(engine, run.text, files, root / f"ck{i}", run.sink, names=names,
                          path=run.path, late_rows_sink=run.late_sink, per_trigger=per_trigger)
        run.query.query.awaitTermination()
    return reference


#: rows written again in a later micro-batch, still on time there: (3, 3, 21) of s's second
#: batch comes again in its third (the bound is then 21 at most); a repeat is one element
REPEAT = {(2, "s"): [(1, 3)]}


@pytest.fixture(scope="module")
def differential(engine, tmp_path_factory):
    """Every case on every path it is compared on, over BATCHES (two files of a stream per
    micro-batch, a row repeated in a later one)."""
    runs = {(name, path): Run(text, path) for name, (text, auto, others) in CASES.items()
            for path in ("auto",) + others}
    root = tmp_path_factory.mktemp("differential")
    reference = run_side_by_side(engine, root, list(runs.values()), BATCHES, REPEAT,
                                 per_trigger=2)
    lines = [line for f in sorted((root / "in" / "s").iterdir()) for line in
             f.read_text().splitlines()]
    assert len(lines) == len(set(lines)) + 1, "one row is written twice"
    return reference, runs


def test_every_path_gives_the_rows_of_the_live_runtime(differential):
    # one test for every case: under pytest-xdist each worker running one of them would build
    # the whole fixture (22 streaming queries, about a minute)
    reference, runs = differential
    wrong = []
    for case, (text, auto, others) in CASES.items():
        expected = reference.rows(text)
        assert expected, f"{case}: the case produces output"
        assert runs[(case, "auto")].query.path == auto, case
        for path in ("auto",) + others:
            got = runs[(case, path)].rows
            if got != expected:
                wrong.append(f"{case}, path {path}: {sorted(got)} != {sorted(expected)}")
            elif max(got.values()) != 1:
                wrong.append(f"{case}, path {path}: a row was emitted twice")
    assert not wrong, "\n".join(wrong)


def test_late_rows_are_counted_handed_on_and_change_no_result(engine, tmp_path):
    runs = [Run(HOP), Run(RUNNING_SUM, late_rows=True), Run(HOP, late_rows=True),
            Run(SESSIONS, late_rows=True)]
    reference = run_side_by_side(engine, tmp_path, runs, LATE)
    # a query keeping its late rows takes a keyed path (the native one counts them only)
    assert [r.query.path for r in runs] == ["native", "vectorised", "general", "general"]
    assert reference.late == 3
    for run in runs:
        assert run.query.late_rows == 3, run.query.path
        assert run.rows == reference.rows(run.text), run.query.path
    for run in runs[1:]:
        got = set()
        for stream, rowtime, bound, row in run.late_rows:
            values = json.loads(row)
            assert stream == "s" and values["ts"] == rowtime
            got.add((rowtime, bound, values["k"], values["v"]))
        assert got == LATE_ROWS, run.query.path


@pytest.mark.parametrize("text", [RUNNING_SUM, HOP, SESSIONS],
                         ids=["vectorised", "native", "general-windowby"])
def test_a_restart_from_the_checkpoint_loses_and_repeats_nothing(engine, tmp_path, text):
    reference = Reference([text])
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
    names = reference.queries[text].heading.names
    got = Counter(tuple(r[n] for n in names)
                  for r in engine.spark.read.parquet(str(out_dir)).collect())
    assert 0 < first < sum(got.values())
    assert got == reference.rows(text)


def test_bad_rows_fail_the_query_naming_what_is_wrong(engine, tmp_path):
    """The failed query's sira error, from ``await_termination`` (Spark's exception, which
    ``query.awaitTermination`` raises, is its cause), on every path."""
    from pyspark.errors import StreamingQueryException

    from sira.errors import NullValue, SiraValueError
    files = Files(tmp_path / "in", names=("s",))
    (files.root / "s" / "bad.json").write_text(
        json.dumps({"k": 1, "v": None, "ts": 5, "seq": 1, "is_bound": False}) + "\n")
    for path, text in (("native", "restrict(s, gt(v, 0))"), ("vectorised", RUNNING_SUM),
                       ("general", RUNNING_SUM)):
        q = start(engine, text, files, tmp_path / f"ck-{path}", collector()[1], names=("s",),
                  path=path)
        with pytest.raises(NullValue, match="relvar 's': attribute 'v' holds NULL in 1 row") \
                as caught:
            q.await_termination()
        assert (caught.value.relvar, caught.value.attribute) == ("s", "v"), path
        assert isinstance(caught.value.__cause__, StreamingQueryException), path
    (files.root / "s" / "bad.json").write_text(
        json.dumps({"k": 1, "v": 1, "ts": -1, "seq": 1, "is_bound": False}) + "\n")
    q = start(engine, RUNNING_SUM, files, tmp_path / "ck-rowtime", collector()[1], names=("s",))
    with pytest.raises(SiraValueError, match="rowtime 'ts' outside"):
        q.await_termination()
    with pytest.raises(StreamingQueryException, match="rowtime 'ts' outside"):
        q.query.awaitTermination()


#: a source of every kind of attribute, its TIMESTAMPs at both ends of sira's range (Spark
#: hands a timestamp to pandas as nanoseconds, which hold the years 1677 to 2262 only)
TYPED_SCHEMA = ("k int, b decimal(38,0), f double, d date, t timestamp, s string,"
                " iv struct<begin:long,end:long>, ti struct<begin:timestamp_ntz,end:timestamp_ntz>,"
                " r array<struct<x:timestamp,y:double>>, tup struct<a:timestamp,z:double>, ts long")
TYPED_ROWS = [
    {"k": 1, "b": 12345678901234567890123456789, "f": -0.0, "d": "0001-01-01",
     "t": "9999-12-31 23:59:59.999999", "s": "é", "iv": {"begin": 1, "end": 5},
     "ti": {"begin": "0001-01-01 00:00:00", "end": None},
     "r": [{"x": "9999-01-01 00:00:00", "y": -0.0}, {"x": "9999-01-01 00:00:00", "y": 0.0}],
     "tup": {"a": "0001-01-01 00:00:00.5", "z": 1.5}, "ts": 3},
    {"k": 2, "b": -5, "f": 2.5, "d": "9999-12-31", "t": "0001-01-01 00:00:00", "s": "",
     "iv": {"begin": 2, "end": 2}, "ti": {"begin": "2000-01-01 00:00:00",
                                          "end": "2000-01-01 00:00:00"},
     "r": [], "tup": {"a": "2000-01-01 00:00:00", "z": -0.0}, "ts": 4},
    {"k": 3, "b": 0, "f": 1e300, "d": "2020-02-29", "t": "2262-04-12 00:00:00", "s": "x",
     "iv": {"begin": 3, "end": 3}, "ti": {"begin": "1677-09-20 00:00:00",
                                          "end": "2262-04-12 00:00:00"},
     "r": [{"x": "1000-01-01 00:00:00", "y": 1.0}], "tup": {"a": "1000-01-01 00:00:00", "z": 0.0},
     "ts": 4},
]


def _typed_reference(text, rows):
    """The live runtime's results of ``text`` over ``rows`` (TYPED_SCHEMA), the bound then at
    90, as dicts."""
    from sira import (BIGINT, DATE, FLOAT, INTINTERVAL, STRING, TIMESTAMP, TIMESTAMPINTERVAL,
                      Heading)
    from sira.intervals import Interval
    from sira.types import RelationType, TupleType
    from sira.values import Tuple
    element = Heading.of({"x": TIMESTAMP, "y": FLOAT})
    inner = Heading.of({"a": TIMESTAMP, "z": FLOAT})
    heading = {"k": INT, "b": BIGINT, "f": FLOAT, "d": DATE, "t": TIMESTAMP, "s": STRING,
               "iv": INTINTERVAL, "ti": TIMESTAMPINTERVAL, "r": RelationType(element),
               "tup": TupleType(inner)}
    when = _dt.datetime.fromisoformat

    def value(row):
        ends = row["ti"]
        return {"k": row["k"], "b": row["b"], "f": row["f"] + 0.0,
                "d": _dt.date.fromisoformat(row["d"]), "t": when(row["t"]), "s": row["s"],
                "iv": Interval(row["iv"]["begin"], row["iv"]["end"]),
                "ti": Interval(when(ends["begin"]), ends["end"] and when(ends["end"])),
                "r": Relation(element, frozenset((when(e["x"]), e["y"] + 0.0) for e in row["r"])),
                "tup": Tuple(inner, (when(row["tup"]["a"]), row["tup"]["z"] + 0.0))}
    engine = StreamEngine()
    stream = engine.create_stream("s", heading)
    query = engine.register(text, {})
    producer = stream.attach("s")
    producer.insert_many([(value(r), r["ts"]) for r in sorted(rows, key=lambda r: r["ts"])])
    producer.bound(90)
    return query.results()


@pytest.mark.parametrize("text, paths", [
    ("restrict(s, gt(k, 1))", ("native", "general")),
    ("istream(project(window(s, ts, range(10)), (k, b, f, d, t, s, iv, ti, r, tup, during)),"
     " at)", ("general",)),
])
def test_every_attribute_type_crosses_every_path_as_the_live_runtime_reads_it(engine, tmp_path,
                                                                              text, paths):
    # TIMESTAMPs in years 1 and 9999 (on the code before, pyarrow's "out of bounds timestamp"
    # on every path), intervals, tuples and relations (the general path failed on a dict),
    # -0.0 as 0.0, an empty interval as the one empty interval, an RVA's repeats as one
    from sira_spark.convert import from_row
    from sira_spark.live import LiveSource
    (tmp_path / "s").mkdir()
    lines = TYPED_ROWS + [
        {"k": 0, "b": 0, "f": 0.0, "d": "2000-01-01", "t": "2000-01-01 00:00:00", "s": "",
         "iv": {"begin": 0, "end": 1}, "ti": {"begin": "2000-01-01 00:00:00", "end": None},
         "r": [], "tup": {"a": "2000-01-01 00:00:00", "z": 0.0}, "ts": 90}]
    (tmp_path / "s" / "b.json").write_text("".join(json.dumps(r) + "\n" for r in lines))
    reference = _typed_reference(text, TYPED_ROWS)
    assert reference
    for path in paths:
        out, sink = collector()
        source = LiveSource(engine.spark.readStream.schema(TYPED_SCHEMA).json(str(tmp_path / "s")),
                            rowtime="ts")
        q = engine.stream(text, {"s": source}, sink=sink, checkpoint=str(tmp_path / f"ck-{path}"),
                          trigger={"availableNow": True}, path=path)
        q.query.awaitTermination()
        heading = q.node.heading  # the reference's also holds its sequence number, seq
        expected = Counter(tuple(r[n] for n in heading.names) for r in reference)
        got = Counter(from_row(heading, row) for rows in out.values() for row in rows)
        assert got == expected, path


def test_a_null_or_an_inverted_interval_inside_a_value_fails_the_query_naming_it(engine,
                                                                              tmp_path):
    from pyspark.errors import StreamingQueryException

    from sira_spark.live import LiveSource
    row = TYPED_ROWS[0]
    for case, bad, what in (
            ("null-begin", {"iv": {"begin": None, "end": 5}}, "attribute 'iv' holds NULL"),
            ("inverted", {"iv": {"begin": 5, "end": 1}}, "attribute 'iv' holds an interval whose"
                                                         " end is before its begin"),
            ("null-in-rva", {"r": [{"x": None, "y": 1.0}]}, "attribute 'r' holds NULL"),
            ("nan-in-tuple", {"tup": {"a": "2000-01-01 00:00:00", "z": "NaN"}},
             "attribute 'tup' holds NaN")):
        (tmp_path / case).mkdir()
        (tmp_path / case / "b.json").write_text(json.dumps(dict(row, **bad)) + "\n")
        source = LiveSource(engine.spark.readStream.schema(TYPED_SCHEMA)
                            .option("allowNonNumericNumbers", True).json(str(tmp_path / case)),
                            rowtime="ts")
        for path in ("native", "general"):
            q = engine.stream("restrict(s, gt(k, 0))", {"s": source}, sink=collector()[1],
                              checkpoint=str(tmp_path / f"ck-{case}-{path}"),
                              trigger={"availableNow": True}, path=path)
            with pytest.raises(StreamingQueryException, match=what):
                q.query.awaitTermination()


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


def _sources(engine, tmp_path):
    from sira_spark.live import LiveSource
    files = Files(tmp_path / "in")
    return {n: LiveSource(engine.spark.readStream.schema(SCHEMA).json(str(files.root / n)),
                          rowtime="ts", punctuation="is_bound") for n in ("s", "r")}


def test_the_state_is_partitioned_by_what_the_query_keeps_apart(engine, tmp_path):
    from sira_spark.live import compile_live
    sources = _sources(engine, tmp_path)
    assert compile_live(engine, RUNNING_SUM, sources).key == ("k",)
    assert compile_live(engine, "changes(window(s, ts, rows(3)), at)", sources).key == ()
    assert compile_live(engine, "restrict(s, gt(v, 2))", sources,
                        path="general").key == ("k", "seq", "ts", "v")


def test_a_path_the_query_cannot_take_is_refused(engine, tmp_path):
    from sira.errors import SiraValueError
    from sira_spark.live import compile_live
    sources = _sources(engine, tmp_path)
    with pytest.raises(SiraValueError, match="no vectorised plan"):
        compile_live(engine, "restrict(s, gt(v, 2))", sources, path="vectorised")
    with pytest.raises(SiraValueError, match="no native plan"):
        compile_live(engine, RUNNING_SUM, sources, path="native")
    with pytest.raises(SiraValueError, match="keeps late rows"):
        compile_live(engine, HOP, sources, path="native", keep_late_rows=True)
    with pytest.raises(SiraValueError, match="path must be"):
        compile_live(engine, RUNNING_SUM, sources, path="fast")


def test_late_rows_sink_needs_a_callable_sink(engine, tmp_path):
    from sira.errors import SiraError
    with pytest.raises(SiraError, match="both be callables"):
        start(engine, RUNNING_SUM, Files(tmp_path / "in"), tmp_path / "ck", "parquet",
              sink_options={"path": tmp_path / "out"}, late_rows_sink=collector()[1])


def test_a_rowtime_that_is_not_an_integer_is_refused(engine, tmp_path):
    from sira.errors import SiraTypeError
    from sira_spark.live import LiveSource, compile_live
    files = Files(tmp_path / "in", names=("s",))
    df = engine.spark.readStream.schema("k int, v int, ts string").json(str(files.root / "s"))
    with pytest.raises(SiraTypeError, match="rowtime column 'ts'"):
        compile_live(engine, "restrict(s, gt(k, 1))", {"s": LiveSource(df, rowtime="ts")})


# ------------------------------------------------------------------ the vectorised kernel

KERNEL_QUERIES = [
    RUNNING_SUM,
    "istream(summarizebyusing(window(s, ts, now), (k, during), (n(plus(1))), (during)), at)",
    "dstream(summarizebyusing(window(s, ts, range(7) slide(3)), (k, during), (total(plus(v))"
    " n(plus(1))), (during)), at)",
    "changes(summarizebyusing(window(s, ts, range(unbounded)), (k, during), (total(plus(v))),"
    " (during)), at)",
    "changes(summarizebyusing(window(s, ts, range(4) slide(4)), (k, during), (n(plus(2))),"
    " (during)), at)",
]

_trains = st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 2), st.integers(-3, 3),
                                                st.integers(0, 6)), max_size=6),
                             st.integers(0, 5), st.booleans()), min_size=1, max_size=6)


def _kernel_rows(shape, trains):
    """The vectorised kernel over ``trains`` (rows (k, v, dt), a bound step and whether the
    rows of the train before come again), as the handler runs it per key: rows not before the
    bound join their key's state, then every key folds the instants the new bound (the latest
    rowtime so far) has passed."""
    from sira_spark.live.vector import KeyState, decode, encode
    states, out, bound, latest, seq, before = {}, Counter(), None, 0, 0, []
    for rows, step, again in trains:
        accepted = []
        for k, v, t, n in [(k, v, latest + dt, None) for k, v, dt in rows] + \
                (before if again else []):
            if bound is not None and t < bound:
                continue  # late
            if n is None:
                seq += 1
                n = seq
                accepted.append((k, v, t, n))
            state = states.setdefault(k, KeyState.fresh(shape))
            state.add({"k": np.array([k], dtype=np.int32), "v": np.array([v], dtype=np.int32),
                       "ts": np.array([t]), "seq": np.array([n])})
        before = accepted
        accepted = [t for _, _, t, _ in accepted]
        latest += step
        bound = max([bound or 0, latest] + accepted)
        for k, state in list(states.items()):
            out.update(_rows_of(shape, k, state.close(shape, bound)))
            states[k] = decode(encode(state, shape), shape)  # as Spark's state store keeps it
    for k, state in states.items():
        out.update(_rows_of(shape, k, state.close(shape, 10 ** 9)))
    return out


def _rows_of(shape, k, out):
    n = len(out[shape.at])
    out = dict(out, k=np.full(n, k))
    return [tuple(v.item() if hasattr(v, "item") else v for v in row)
            for row in zip(*[list(out[name]) for name in shape.heading.names])]


def _runtime_rows(text, trains):
    """The live runtime over the same trains (each one a train, then the same bound)."""
    engine = StreamEngine()
    stream = engine.create_stream("s", {"k": INT, "v": INT})
    query = engine.register(text)
    producer = stream.attach()
    bound, latest = None, 0
    for rows, step, _ in trains:
        batch = sorted(((k, v, latest + dt) for k, v, dt in rows
                        if bound is None or latest + dt >= bound), key=lambda r: r[2])
        if batch:
            producer.insert_many([({"k": k, "v": v}, t) for k, v, t in batch])
        latest += step
        bound = max([bound or 0, latest] + [t for _, _, t in batch])
        producer.bound(bound)
    producer.bound(10 ** 9)
    names = query.heading.names
    return Counter(tuple(r[n] for n in names) for r in query.results())


@settings(max_examples=60, deadline=None)
@given(text=st.sampled_from(KERNEL_QUERIES), trains=_trains)
def test_the_vectorised_kernel_gives_the_rows_of_the_live_runtime(text, trains):
    from sira_spark.live.common import StreamShape
    from sira_spark.live.vector import window_sums_of
    heading = sira.Heading.of({"k": INT, "v": INT, "ts": sira.LONG, "seq": sira.LONG})
    node = sira.parse(text, {"s": heading})
    shape = window_sums_of(node, {"s": StreamShape("s", heading, "ts")}, ("k",))
    assert shape is not None
    assert _kernel_rows(shape, trains) == _runtime_rows(text, trains)


def test_an_int_sum_leaving_int_raises_the_runtime_error():
    from sira.errors import IntOverflow
    from sira_spark.live.common import StreamShape
    from sira_spark.live.vector import KeyState, window_sums_of
    heading = sira.Heading.of({"k": INT, "v": INT, "ts": sira.LONG, "seq": sira.LONG})
    shape = window_sums_of(sira.parse(RUNNING_SUM, {"s": heading}),
                           {"s": StreamShape("s", heading, "ts")}, ("k",))
    state = KeyState.fresh(shape)
    big = 2 ** 31 - 1
    state.add({"k": np.array([1, 1], dtype=np.int32), "v": np.array([big, big], dtype=np.int32),
               "ts": np.array([1, 2]), "seq": np.array([1, 2])})
    with pytest.raises(IntOverflow):
        state.close(shape, 5)
