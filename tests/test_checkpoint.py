"""Checkpoints of live queries: one data-only file with a magic header, a format version, its
length and a SHA-256 checksum; every damaged, tampered-with or foreign file is a CheckpointError
naming the file, and nothing in one is ever executed."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import pickle
import random

import pytest

from sira import INT
from sira.errors import CheckpointError
from sira.streams import LiveQuery, StreamEngine
from sira.streams.checkpoint import encode_content, frame

from test_live import CONSTANT, QUERIES

SMALL = ("changes(summarizebyusing(window(s, ts, range(3)), (k, during), (n(plus(1))),"
         " (during)), at)")


def small_checkpoint(path):
    """A real checkpoint of a windowed count with rows inside its window and rows waiting."""
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT})
    q = engine.register(SMALL)
    p, other = s.attach("P"), s.attach("Q")
    other.bound(2)
    p.insert_many([({"k": 1}, 1), ({"k": 2}, 2), ({"k": 1}, 4)])  # 4 waits for Q
    q.save(path)
    return q


def continuation(q):
    """The further output of a (restored) query fed the same rest of the input."""
    q.producer("s", "Q").bound(5)
    p = q.producer("s", "P")
    p.insert({"k": 2}, 6)
    p.bound(20)
    return sorted(json.dumps(r, sort_keys=True) for r in q.results())


def content_of(path) -> dict:
    data = pathlib.Path(path).read_bytes()
    return json.loads(data.split(b"\n", 4)[4])


def rewrite(path, content, version=1):
    body = json.dumps(content).encode("utf-8")
    data = frame(body)
    if version != 1:
        data = data.replace(b"format 1\n", f"format {version}\n".encode(), 1)
    pathlib.Path(path).write_bytes(data)


def test_a_checkpoint_is_one_data_file_with_magic_version_length_and_checksum(tmp_path):
    small_checkpoint(tmp_path / "q.ckpt")
    data = (tmp_path / "q.ckpt").read_bytes()
    magic, version, length, digest, body = data.split(b"\n", 4)
    assert (magic, version) == (b"SIRA-CHECKPOINT", b"format 1")
    assert length == f"length {len(body)}".encode()
    assert digest == f"sha256 {hashlib.sha256(body).hexdigest()}".encode()
    content = json.loads(body)
    (query,) = content["queries"]
    assert query["text"] == "changes(summarizebyusing(window(s,ts,range(3)),(k,during)," \
                            "(n(plus(1))),(during)),at)"
    (stream,) = content["streams"]
    assert [p["name"] for p in stream["producers"]] == ["P", "Q"]
    assert stream["producers"][0]["queue"] == [[4, [1, 0, 4]]]  # k, seq, ts: waiting for Q
    assert os.listdir(tmp_path) == ["q.ckpt"]


def test_the_streams_do_not_use_pickle():
    root = pathlib.Path(__file__).parent.parent / "sira" / "streams"
    for source in root.glob("*.py"):
        text = source.read_text()
        assert "import pickle" not in text and "pickle." not in text, source.name


def test_every_truncation_of_a_checkpoint_is_refused(tmp_path):
    path = tmp_path / "q.ckpt"
    small_checkpoint(path)
    data = path.read_bytes()
    for n in range(len(data)):
        cut = variant(tmp_path, n, data[:n])
        with pytest.raises(CheckpointError) as err:
            LiveQuery.load(cut)
        assert err.value.path == str(cut)
        cut.unlink()


def variant(directory, i, data):
    """A file holding ``data`` (a new file each time: rewriting one file in place makes the
    file system flush it to disk, which is a hundred times slower)."""
    target = directory / f"variant{i}.ckpt"
    target.write_bytes(data)
    return target


def test_every_single_bit_flip_is_refused_or_changes_nothing(tmp_path):
    """Issue 11.1: flip every bit of a small real checkpoint, one at a time: each load raises
    CheckpointError or gives a query whose further output is the original's."""
    path = tmp_path / "q.ckpt"
    small_checkpoint(path)
    data = path.read_bytes()
    expected = continuation(LiveQuery.load(path))
    loaded = 0
    for i in range(len(data) * 8):
        damaged = bytearray(data)
        damaged[i // 8] ^= 1 << (i % 8)
        flipped = variant(tmp_path, i, damaged)
        try:
            q = LiveQuery.load(flipped)
        except CheckpointError as err:
            assert err.path == str(flipped) and err.reason
            continue
        finally:
            flipped.unlink()
        loaded += 1
        assert continuation(q) == expected, f"bit {i} changed the results silently"
    assert loaded == 0  # with this format, every flip is caught by the header or the checksum


def test_reasons_name_what_is_wrong(tmp_path):
    path = tmp_path / "q.ckpt"
    small_checkpoint(path)
    data = path.read_bytes()
    cases = {
        b"": "not a sira checkpoint",
        b"hello": "not a sira checkpoint",
        data[:20]: "truncated header",
        data[:-10]: "truncated: ",
        data + b"x": "1 bytes after",
        data.replace(b"format 1", b"format 7"): "format version 7; this sira reads version 1",
        data[:-3] + b"AAA": "checksum mismatch",
    }
    for i, (damaged, reason) in enumerate(cases.items()):
        target = tmp_path / f"case{i}.ckpt"
        target.write_bytes(damaged)
        with pytest.raises(CheckpointError, match=reason) as err:
            LiveQuery.load(target)
        assert str(target) in str(err.value)
    with pytest.raises(CheckpointError, match="cannot be read"):
        LiveQuery.load(tmp_path / "missing.ckpt")


def test_a_pickle_is_refused_without_being_unpickled(tmp_path):
    marker = tmp_path / "ran"

    class Exploit:
        def __reduce__(self):
            return (pathlib.Path.touch, (marker,))
    path = tmp_path / "evil.ckpt"
    path.write_bytes(pickle.dumps(Exploit()))
    with pytest.raises(CheckpointError, match="looks like a pickle"):
        LiveQuery.load(path)
    assert not marker.exists()


def test_a_tampered_checkpoint_with_a_recomputed_checksum_is_still_only_data(tmp_path):
    path = tmp_path / "q.ckpt"
    small_checkpoint(path)
    original = content_of(path)
    marker = tmp_path / "ran"

    def tampered(change):
        content = json.loads(json.dumps(original))
        change(content)
        rewrite(path, content)
        with pytest.raises(CheckpointError) as err:
            LiveQuery.load(path)
        assert err.value.path == str(path)
        return err.value.reason

    def text(c):
        c["queries"][0]["text"] = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    assert "malformed content" in tampered(text)
    assert not marker.exists()

    def wrong_type(c):
        c["streams"][0]["producers"][0]["queue"][0][1][0] = "one"
    assert "'one' is not INT" in tampered(wrong_type)

    def overflow(c):
        c["streams"][0]["producers"][0]["queue"][0][1][0] = 2 ** 40
    assert "does not fit INT" in tampered(overflow)

    def operators(c):
        c["queries"][0]["operators"].pop()
    assert "dataflow does not match" in tampered(operators)

    def not_an_object(c):
        c["queries"] = "everything"
    assert "queries must be a list" in tampered(not_an_object)

    content = json.loads(json.dumps(original))
    rewrite(path, content, version=2)
    with pytest.raises(CheckpointError, match="format version 2"):
        LiveQuery.load(path)


def test_a_crash_while_saving_keeps_the_previous_checkpoint_and_the_next_save_clears_debris(
        tmp_path, monkeypatch):
    path = tmp_path / "q.ckpt"
    q = small_checkpoint(path)
    good = path.read_bytes()
    debris = tmp_path / ".q.ckpt.sira-tmp-killed"  # what a save killed before renaming leaves
    debris.write_bytes(good[:50])
    q.producer("s", "Q").bound(3)

    def crash(*args):
        raise OSError("power cut")
    with monkeypatch.context() as m:
        m.setattr(os, "replace", crash)
        with pytest.raises(OSError, match="power cut"):
            q.save(path)
    assert path.read_bytes() == good
    assert sorted(os.listdir(tmp_path)) == [debris.name, "q.ckpt"]
    q.save(path)
    assert os.listdir(tmp_path) == ["q.ckpt"]
    assert content_of(path) != json.loads(good.split(b"\n", 4)[4])
    assert continuation(LiveQuery.load(path)) == continuation(q)


def test_an_engine_checkpoint_restores_every_query_and_stream(tmp_path):
    engine = StreamEngine()
    s = engine.create_stream("s", {"k": INT})
    counts = engine.register(SMALL)
    odd = engine.register("restrict(s, eq(k, 1))", keep=False)
    s.attach("P").insert_many([({"k": 1}, 1), ({"k": 2}, 2)])
    engine.save(tmp_path / "engine.ckpt")
    with pytest.raises(CheckpointError, match="holds 2 queries"):
        LiveQuery.load(tmp_path / "engine.ckpt")
    restored = StreamEngine.load(tmp_path / "engine.ckpt")
    assert [repr(q.node) for q in restored.queries] == [repr(counts.node), repr(odd.node)]
    assert not restored.queries[1].keep
    assert encode_content(list(restored.streams.values()), restored.queries) == \
        encode_content(list(engine.streams.values()), engine.queries)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused-then-unfused",
                                                     "unfused-then-fused"])
@pytest.mark.parametrize("query_text", QUERIES)
def test_every_live_query_saves_and_restores_its_whole_state(tmp_path, query_text, fuse):
    """Restored with the other execution (fused or not): a checkpoint does not depend on it."""
    rnd = random.Random(query_text)
    engine = StreamEngine(fuse=fuse)
    streams = {n: engine.create_stream(n, {"k": INT, "v": INT}) for n in ("s", "r")}
    q = engine.register(query_text, {"t": CONSTANT})
    producers = {n: s.attach(n.upper()) for n, s in streams.items()}
    clock = {"s": 0, "r": 0}

    def feed(steps):
        for _ in range(steps):
            name = rnd.choice("sr")
            clock[name] += rnd.randrange(3)
            producers[name].insert({"k": rnd.randrange(3), "v": rnd.randrange(5)}, clock[name])

    feed(25)
    q.save(tmp_path / "q.ckpt")
    restored = LiveQuery.load(tmp_path / "q.ckpt", fuse=not fuse)
    assert encode_content(list(restored.streams.values()), [restored]) == \
        encode_content(list(q.streams.values()), [q])
    engine.adopt(restored)  # from here on both get the same rows
    feed(25)
    for p in producers.values():
        p.detach()
    engine.finish()
    assert restored.error is None
    assert restored.sink.results == q.sink.results  # the same rows in the same order
    assert encode_content([], [restored]) == encode_content([], [q])


def test_values_of_every_type_survive_a_checkpoint(tmp_path):
    import datetime
    from sira import BIGINT, BOOLEAN, DATE, FLOAT, STRING, TIMESTAMP
    engine = StreamEngine()
    s = engine.create_stream("s", {"i": INT, "f": FLOAT, "name": STRING, "ok": BOOLEAN,
                                   "d": DATE, "stamp": TIMESTAMP, "big": BIGINT})
    for text in ["changes(window(s, ts, range(3) on(f)), at)",
                 "changes(summarizebyusing(window(s, ts, rows(3)), (name, during), (tot(plus(f))"
                 " top(max(name)) low(min(d)) every(and(ok)) b(plus(big))), (during)), at)",
                 "summarizebyusing(window(s, ts, range(4)), (ok, during), (m(max(stamp))"
                 " n(plus(1))), (during))"]:
        engine.register(text)
    p = s.attach("P")
    for i in range(6):
        p.insert({"i": i, "f": i * 1.5 + 0.1, "name": f"n{i % 2}é", "ok": i % 3 != 0,
                  "d": datetime.date(2024, 1, 1 + i), "big": 10 ** 30 + i,
                  "stamp": datetime.datetime(2024, 1, 1, 12, i, 30, 123456)}, i * 2)
    engine.save(tmp_path / "e.ckpt")
    restored = StreamEngine.load(tmp_path / "e.ckpt")
    assert encode_content(list(restored.streams.values()), restored.queries) == \
        encode_content(list(engine.streams.values()), engine.queries)
    for e in (engine, restored):
        last = e.streams["s"].producer("P")
        last.insert({"i": 9, "f": float("inf"), "name": "x", "ok": True, "big": -5,
                     "d": datetime.date(2025, 1, 1), "stamp": datetime.datetime(2025, 1, 1)}, 20)
        last.detach()
        e.finish()
    for q, r in zip(engine.queries, restored.queries):
        assert r.error is None and len(r.results()) > 0
        assert sorted(map(repr, r.sink.results)) == sorted(map(repr, q.sink.results))
