"""Checkpoints of live queries: one file, data only, versioned and checksummed.

A checkpoint is a text file: four header lines, then the content::

    SIRA-CHECKPOINT
    format 1
    length <number of bytes of the content>
    sha256 <64 lowercase hex digits: the SHA-256 of the content>
    <the content: one JSON object, UTF-8>

The content holds every stream the saved queries read (its name, payload heading, rowtime and
arrival attribute names, clock, arrival counter, the bound it has passed on, and each
producer's name, attachment, bound, position and rows still waiting to leave) and every query:
its expression as sira text (re-parsed on load), the constant relations it reads, what it has
consumed from each stream, its failure if it failed, and the state of each operator of its
dataflow. Values are encoded by the type their heading gives them: the integer types and
BOOLEAN as JSON numbers and booleans, FLOAT as a number (``"inf"``/``"-inf"`` for the
infinities), STRING as a string, DATE and TIMESTAMP in ISO 8601, AVERAGE as ``[count, value]``,
an interval as ``[begin, end]`` (end null when unbounded), a relation as a list of rows and a
tuple as a row; a row is a list of values in its heading's (alphabetical) order. Times inside
the dataflow are integers (``"inf"`` once the input is finished).

Loading never executes anything: it checks the header, the length and the checksum, decodes
the JSON, re-parses the expression and checks every value against its type. A file that is
missing, truncated, corrupted, tampered with, of another format version or not a checkpoint
raises :class:`~sira.errors.CheckpointError` naming the file and what is wrong.

Saving is atomic: the file is written beside the target under a temporary name
(``.<name>.sira-tmp-*``), flushed to disk, renamed over the target and the directory synced. A
crash leaves the previous checkpoint intact; the next successful save removes temporary files
that a crashed save left behind.

    >>> import os, tempfile, sira
    >>> from sira.streams import StreamEngine, LiveQuery
    >>> engine = StreamEngine()
    >>> s = engine.create_stream("s", {"v": sira.INT})
    >>> q = engine.register("restrict(s, gt(v, 1))")
    >>> s.attach("P").insert_many([({"v": 1}, 1), ({"v": 2}, 2)])
    >>> path = os.path.join(tempfile.mkdtemp(), "q.ckpt")
    >>> q.save(path)
    >>> open(path, "rb").read().split(b"\\n")[:2]
    [b'SIRA-CHECKPOINT', b'format 1']
    >>> restored = LiveQuery.load(path)
    >>> restored.producer("s", "P").insert({"v": 3}, 3)
    >>> [r["v"] for r in restored.results()]
    [2, 3]
"""

from __future__ import annotations

import datetime
import glob
import hashlib
import json
import math
import os
import re
import tempfile
from collections import deque

from sortedcontainers import SortedDict, SortedList

from ..errors import CheckpointError, SiraError
from ..expressions.evaluate import infer_type
from ..intervals import Interval, IntervalType
from ..types import (AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, STRING, TIMESTAMP, Average,
                     IntegerType, RelationType, TupleType, type_named)
from ..values import Heading, Relation, Tuple
from .named import LOG, _ProducerState
from .operators import (INFINITY, InternalStreamError, Merge, RowMap, Sink, Source, StreamJoin,
                        StreamUngroup, ToStream)
from .temporal import (TemporalJoin, TemporalSetOp, TemporalSummarize, WindowOp,
                       WindowSummarize, _Running, _RunningExtreme, _RunningFloatSum, _RunningLogic,
                       _RunningSum)

MAGIC = b"SIRA-CHECKPOINT"
FORMAT_VERSION = 1
_TMP_INFIX = ".sira-tmp-"


# ---------------------------------------------------------------------------------- the file

def save_checkpoint(path, streams: list, queries: list) -> None:
    """Write ``streams`` and ``queries`` to ``path`` atomically (see the module docstring)."""
    body = json.dumps(encode_content(streams, queries), separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False).encode("utf-8")
    _write_atomically(path, frame(body))


def encode_content(streams: list, queries: list) -> dict:
    """The content of a checkpoint of ``streams`` and ``queries`` (JSON data; equal states give
    equal content, so it also serves to check that something changed nothing)."""
    return {"streams": [_encode_stream(s) for s in streams],
            "queries": [_encode_query(q) for q in queries]}


def frame(body: bytes) -> bytes:
    """The header lines followed by ``body``."""
    digest = hashlib.sha256(body).hexdigest()
    header = f"format {FORMAT_VERSION}\nlength {len(body)}\nsha256 {digest}\n".encode("ascii")
    return MAGIC + b"\n" + header + body


def _write_atomically(path, data: bytes) -> None:
    path = os.path.abspath(os.fspath(path))
    directory, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}{_TMP_INFIX}", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _sync_directory(directory)
    _remove_stale_temporaries(directory, name)


def _sync_directory(directory) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # not every platform opens directories
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_stale_temporaries(directory, name) -> None:
    """Temporary files of earlier saves to the same target that crashed before renaming."""
    for stale in glob.glob(os.path.join(glob.escape(directory),
                                        f".{glob.escape(name)}{_TMP_INFIX}*")):
        try:
            os.unlink(stale)
        except OSError:
            pass


def load_checkpoint(path, fuse: bool = True):
    """The :class:`~sira.streams.StreamEngine` a checkpoint file describes (its queries fused
    where they allow, unless ``fuse`` is False).

    Raises:
        CheckpointError: the file cannot be read or is not a valid checkpoint.
    """
    where = os.fspath(path)
    try:
        with open(where, "rb") as f:
            data = f.read()
    except OSError as err:
        raise CheckpointError(path=str(where), reason=f"cannot be read ({err.strerror})") \
            from None
    content = unframe(data, str(where))
    try:
        return _Decoder(fuse).engine(content)
    except _Malformed as err:
        raise CheckpointError(path=str(where), reason=f"malformed content: {err}") from None
    except (SiraError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            OverflowError, RecursionError) as err:
        raise CheckpointError(path=str(where), reason=f"malformed content: "
                              f"{type(err).__name__}: {err}") from None


_HEADER = re.compile(rb"format (\d{1,6})\nlength (\d{1,15})\nsha256 ([0-9a-f]{64})\n")


def unframe(data: bytes, path: str) -> dict:
    """The JSON content of a checkpoint's bytes, after checking its header, length and
    checksum (CheckpointError naming ``path`` otherwise)."""
    def bad(reason):
        return CheckpointError(path=path, reason=reason)

    if not data.startswith(MAGIC + b"\n"):
        if data.startswith(b"\x80"):
            raise bad("not a sira checkpoint: it looks like a pickle (older sira versions "
                      "wrote those; they are not loaded because loading one can run code)")
        raise bad("not a sira checkpoint (it does not start with SIRA-CHECKPOINT)")
    rest = data[len(MAGIC) + 1:]
    version = re.match(rb"format (\d{1,6})\n", rest)
    if version is None:
        if b"\n" not in rest:
            raise bad("truncated header (no complete 'format <version>' line)")
        raise bad("malformed header: line 2 is not 'format <version>'")
    if int(version.group(1)) != FORMAT_VERSION:
        raise bad(f"format version {int(version.group(1))}; this sira reads version "
                  f"{FORMAT_VERSION}")
    header = _HEADER.match(rest)
    if header is None:
        truncated = "truncated header" if rest.count(b"\n") < 3 else "malformed header"
        raise bad(f"{truncated} (expected the lines 'length <n>' and 'sha256 <64 lowercase hex "
                  f"digits>')")
    body = rest[header.end():]
    expected = int(header.group(2))
    if len(body) < expected:
        raise bad(f"truncated: {len(body)} of {expected} bytes of content")
    if len(body) > expected:
        raise bad(f"{len(body) - expected} bytes after the {expected} bytes of content")
    if hashlib.sha256(body).hexdigest().encode("ascii") != header.group(3):
        raise bad("checksum mismatch: the content was corrupted or changed")
    try:
        content = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise bad(f"the content is not valid JSON ({err})") from None
    if not isinstance(content, dict):
        raise bad("the content is not a JSON object")
    return content


# ---------------------------------------------------------------------------------- values

class _Malformed(Exception):
    """Content that does not decode (turned into CheckpointError with the file's name)."""


def _expect(condition, what):
    if not condition:
        raise _Malformed(what)


def type_to_json(t):
    """A sira type as JSON: its name, or ``{"relation": heading}`` / ``{"tuple": heading}``."""
    if isinstance(t, RelationType):
        return {"relation": heading_to_json(t.heading)}
    if isinstance(t, TupleType):
        return {"tuple": heading_to_json(t.heading)}
    return t.name.lower()


def type_from_json(obj):
    if isinstance(obj, str):
        return type_named(obj)
    _expect(isinstance(obj, dict) and len(obj) == 1, f"not a type: {obj!r}")
    (kind, heading), = obj.items()
    _expect(kind in ("relation", "tuple"), f"not a type: {obj!r}")
    heading = heading_from_json(heading)
    return RelationType(heading) if kind == "relation" else TupleType(heading)


def heading_to_json(heading, order=None) -> list:
    """``[[name, type], ...]``, in ``order`` (names) or the heading's own."""
    return [[n, type_to_json(heading.type_of(n))] for n in (order or heading.names)]


def heading_from_json(obj) -> Heading:
    _expect(isinstance(obj, list) and all(isinstance(p, list) and len(p) == 2 for p in obj),
            "a heading must be a list of [name, type] pairs")
    return Heading.of([(name, type_from_json(t)) for name, t in obj])


def encode_value(t, v):
    """``v`` (a value of type ``t``) as JSON data."""
    if isinstance(t, IntegerType) or t in (BOOLEAN, STRING):
        return v
    if t == FLOAT:
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    if t in (DATE, TIMESTAMP):
        return v.isoformat()
    if t == AVERAGE:
        return [v.count, encode_value(FLOAT, v.value)]
    if isinstance(t, IntervalType):
        return [encode_value(t.point, v.begin),
                None if v.end is None else encode_value(t.point, v.end)]
    if isinstance(t, RelationType):
        return [encode_row(t.heading.types, body) for body in v.sorted_body()]
    if isinstance(t, TupleType):
        return encode_row(t.heading.types, v.values)
    raise InternalStreamError(operator="checkpoint", detail=f"no encoding for type {t}")


def decode_value(t, obj):
    """The value of type ``t`` that ``obj`` encodes, checked against the type."""
    if isinstance(t, IntegerType):
        _expect(type(obj) is int, f"{obj!r} is not {t}")
        return t.check(obj)
    if t == BOOLEAN:
        _expect(type(obj) is bool, f"{obj!r} is not BOOLEAN")
        return obj
    if t == STRING:
        _expect(type(obj) is str, f"{obj!r} is not STRING")
        return obj
    if t == FLOAT:
        if obj in ("inf", "-inf"):
            return float(obj)
        _expect(type(obj) in (int, float), f"{obj!r} is not FLOAT")
        return t.check(float(obj))
    if t in (DATE, TIMESTAMP):
        _expect(type(obj) is str, f"{obj!r} is not {t}")
        kind = datetime.datetime if t == TIMESTAMP else datetime.date
        return t.check(kind.fromisoformat(obj))
    if t == AVERAGE:
        _expect(isinstance(obj, list) and len(obj) == 2 and type(obj[0]) is int,
                f"{obj!r} is not AVERAGE")
        return Average(obj[0], decode_value(FLOAT, obj[1]))
    if isinstance(t, IntervalType):
        _expect(isinstance(obj, list) and len(obj) == 2, f"{obj!r} is not {t}")
        end = None if obj[1] is None else decode_value(t.point, obj[1])
        return t.check(Interval(decode_value(t.point, obj[0]), end))
    if isinstance(t, RelationType):
        _expect(isinstance(obj, list), f"{obj!r} is not {t}")
        return Relation(t.heading, frozenset(decode_row(t.heading.types, r) for r in obj))
    if isinstance(t, TupleType):
        return Tuple(t.heading, decode_row(t.heading.types, obj))
    raise _Malformed(f"no decoding for type {t}")


def encode_row(types, row) -> list:
    return [encode_value(t, v) for t, v in zip(types, row)]


def decode_row(types, obj) -> tuple:
    _expect(isinstance(obj, list) and len(obj) == len(types),
            f"a row of {len(types)} values expected, got {obj!r}")
    return tuple(decode_value(t, o) for t, o in zip(types, obj))


def encode_time(t):
    """A time of the dataflow: an integer, ``"inf"`` after the end of input (``"-inf"`` before
    any), or null."""
    if t is None or type(t) is int:
        return t
    _check_saved(t in (INFINITY, -INFINITY), f"a time that is not an integer: {t!r}")
    return "inf" if t > 0 else "-inf"


def decode_time(obj):
    if obj is None or type(obj) is int:
        return obj
    _expect(obj in ("inf", "-inf"), f"{obj!r} is not a time")
    return float(obj)


def _count(obj, what="a count"):
    _expect(type(obj) is int and obj >= 0, f"{what} must be a non-negative integer, got "
                                           f"{obj!r}")
    return obj


def _check_saved(condition, detail):
    if not condition:
        raise InternalStreamError(operator="checkpoint", detail=detail)


class _Rows:
    """Encodes and decodes the body tuples of one heading (or of a list of types)."""

    def __init__(self, heading_or_types):
        self.types = tuple(heading_or_types.types if isinstance(heading_or_types, Heading)
                           else heading_or_types)

    def enc(self, row) -> list:
        return encode_row(self.types, row)

    def dec(self, obj) -> tuple:
        return decode_row(self.types, obj)

    def enc_all(self, rows) -> list:
        return [self.enc(r) for r in rows]

    def dec_all(self, obj) -> list:
        _expect(isinstance(obj, list), "a list of rows expected")
        return [self.dec(r) for r in obj]

    def enc_set(self, rows) -> list:
        """A set of rows, in a canonical order (so equal states give equal files)."""
        return sorted(self.enc_all(rows), key=lambda r: json.dumps(r, sort_keys=True))


def _list(obj, what):
    _expect(isinstance(obj, list), f"{what} must be a list")
    return obj


# ---------------------------------------------------------------------------------- streams

def _encode_stream(stream) -> dict:
    rows = _Rows(stream.heading)
    return {"name": stream.name,
            "payload": heading_to_json(stream.payload, stream.payload_order),
            "rowtime": stream.rowtime, "arrival": stream.arrival,
            "clock": encode_time(stream.clock), "seq": stream.seq,
            "passed": encode_time(stream.passed_bound), "ended": stream.ended,
            "producers": [_encode_producer(state, rows) for state in stream._states.values()],
            "active": [state.name for state in stream._producers]}


def _encode_producer(state, rows) -> dict:
    return {"name": state.name, "attached": state.attached, "bound": state.bound,
            "seq": state.seq, "last": state.last,
            "queue": [[t, rows.enc(body)] for t, body in state.queue]}


# ---------------------------------------------------------------------------------- queries

def _encode_query(query) -> dict:
    from .runtime import failure_text
    error = None if query.error is None else failure_text(query.error)
    return {"text": repr(query.node), "keep": query.keep,
            "relations": [{"name": name, "heading": heading_to_json(r.heading),
                           "body": _Rows(r.heading).enc_all(r.sorted_body())}
                          for name, r in query.relations.items()],
            "inputs": {name: {"seq": where.seq, "bound": encode_time(where.bound)}
                       for name, where in query.inputs.items()},
            "error": error,
            "operators": [{"op": type(op).__name__, "ports": _encode_ports(op),
                           "state": _STATES[type(op)][0](op)}
                          for op in operators_of(query)]}


def operators_of(query) -> list:
    """Every operator of a query's dataflow, in a fixed order (depth first from its sources,
    in the order compiling made them), each once."""
    seen, out = set(), []

    def visit(op):
        if id(op) in seen:
            return
        seen.add(id(op))
        _check_fields(op)
        out.append(op)
        for child, _ in op.downstream:
            visit(child)

    for sources in query.sources.values():
        for source in sources:
            visit(source)
    return out


def _encode_ports(op) -> list:
    return [[port, encode_time(bound), encode_time(latest)]
            for port, (bound, latest) in sorted(op.ports.items())]


def _decode_ports(op, obj) -> None:
    saved = {}
    for entry in _list(obj, "ports"):
        _expect(isinstance(entry, list) and len(entry) == 3 and type(entry[0]) is int,
                "a port is [number, bound, latest]")
        saved[entry[0]] = [decode_time(entry[1]), decode_time(entry[2])]
        _expect(None not in saved[entry[0]], "a port's times cannot be null")
    _expect(set(saved) == set(op.ports), f"{type(op).__name__} has inputs {sorted(op.ports)}")
    for port, times in saved.items():  # in place: a fused chain holds these lists
        op.ports[port][:] = times


# ------------------------------------------------------------------ operator states, by class
#
# Each operator class has a pair (encode, decode) below. ``_FIELDS`` lists the attributes each
# class may have: those its state covers and those compiling rebuilds. Saving an operator with
# any other attribute is refused, so that state added to an operator later cannot be silently
# left out of checkpoints.

_BASE = {"node", "heading", "downstream", "ports", "_fns"}
_FIELDS = {
    Source: {"stream_name", "rowtime", "at"},
    RowMap: {"src_heading", "temporal", "during", "merges", "counts", "instant", "seen"},
    Merge: {"bounds", "pending", "out_bound", "instant", "seen", "counter"},
    StreamJoin: {"kind", "shape", "right"},
    ToStream: {"src_heading"},
    StreamUngroup: {"src_heading", "instant", "seen"},
    Sink: {"temporal", "during", "keep", "results", "open", "subscribers", "subscriber_errors",
           "bound"},
    WindowOp: {"src_heading", "buffer", "events", "exits", "parts", "bound", "fifo"},
    TemporalSetOp: {"bounds", "pending", "out_bound", "kind", "full", "holders"},
    TemporalJoin: {"bounds", "pending", "out_bound", "kind", "left_heading", "right_heading",
                   "static", "shape", "left", "right"},
    TemporalSummarize: {"src_heading", "groups", "values"},
    WindowSummarize: {"src_heading", "groups", "values", "window", "buffer", "exits", "bound"},
}
_PART_FIELDS = {"n", "recent", "pending", "exits", "batch"}


def _check_fields(op) -> None:
    known = _FIELDS.get(type(op))
    _check_saved(known is not None, f"{type(op).__name__} cannot be checkpointed")
    extra = set(vars(op)) - known - _BASE
    _check_saved(not extra, f"{type(op).__name__} has state a checkpoint would leave out: "
                            f"{sorted(extra)}")


def _no_state(op) -> dict:
    return {}


def _restore_nothing(op, data) -> None:
    pass


def _enc_rowmap(op) -> dict:
    rows = _Rows(op.heading)
    return {"counts": [[rows.enc(v), n] for v, n in op.counts.items()],
            "instant": encode_time(op.instant), "seen": rows.enc_set(op.seen)}


def _dec_rowmap(op, data) -> None:
    rows = _Rows(op.heading)
    op.counts = {rows.dec(v): _count(n) for v, n in _list(data["counts"], "counts")}
    op.instant = decode_time(data["instant"])
    op.seen = set(rows.dec_all(data["seen"]))


def _enc_ungroup(op) -> dict:
    return {"instant": encode_time(op.instant), "seen": _Rows(op.heading).enc_set(op.seen)}


def _dec_ungroup(op, data) -> None:
    op.instant = decode_time(data["instant"])
    op.seen = set(_Rows(op.heading).dec_all(data["seen"]))


def _enc_merge(op) -> dict:
    rows = _Rows(op.heading)
    return {"bounds": [encode_time(b) for b in op.bounds],
            "pending": [[t, n, rows.enc(row)] for t, n, row in op.pending],
            "out_bound": encode_time(op.out_bound), "instant": encode_time(op.instant),
            "seen": rows.enc_set(op.seen), "counter": op.counter}


def _dec_merge(op, data) -> None:
    rows = _Rows(op.heading)
    op.bounds = _bounds(data["bounds"], len(op.bounds))
    op.pending.clear()
    op.pending.update((decode_time(t), _count(n), rows.dec(row))
                      for t, n, row in _list(data["pending"], "pending"))
    op.out_bound = decode_time(data["out_bound"])
    op.instant = decode_time(data["instant"])
    op.seen = set(rows.dec_all(data["seen"]))
    op.counter = _count(data["counter"])


def _bounds(obj, n) -> list:
    _expect(isinstance(obj, list) and len(obj) == n, f"{n} input bounds expected")
    return [decode_time(b) for b in obj]


def _enc_sink(op) -> dict:
    values = _Rows(_without(op.heading, op.during))
    return {"results": _Rows(op.heading).enc_all(op.results),
            "open": [[values.enc(v), encode_time(t)] for v, t in op.open.items()],
            "bound": encode_time(op.bound)}


def _dec_sink(op, data) -> None:
    values = _Rows(_without(op.heading, op.during))
    op.results = _Rows(op.heading).dec_all(data["results"])
    op.open = {values.dec(v): decode_time(t) for v, t in _list(data["open"], "open")}
    op.bound = decode_time(data["bound"])


def _without(heading, name):
    return heading if name is None or name not in heading else heading.without([name])


def _window_codecs(op):
    """Codecs of a window's elements, partition keys and ``range C on E`` thresholds."""
    h = op.src_heading
    spec = op.node.spec
    on_type = h.type_of(spec.on) if spec.on else None
    if isinstance(on_type, IntegerType):
        on_type = BIGINT  # a threshold E + C may leave E's own range
    return _Rows(h), _Rows([h.type_of(n) for n in spec.partition]), on_type


def _enc_window(op) -> dict:
    rows, keys, on_type = _window_codecs(op)
    return {"buffer": [[t, rows.enc_all(rs)] for t, rs in op.buffer],
            "events": [[t, [[rows.enc(e), d] for e, d in slot.items()]]
                       for t, slot in op.events.items()],
            "exits": [[t, rows.enc(e)] for t, e in op.exits],
            "parts": [[keys.enc(k), _enc_part(part, rows, on_type)]
                      for k, part in op.parts.items()],
            "bound": encode_time(op.bound)}


def _enc_part(part, rows, on_type) -> dict:
    _check_saved(set(part) == _PART_FIELDS, f"a window partition has state a checkpoint "
                                            f"would leave out: {sorted(set(part))}")
    return {"n": part["n"],
            "recent": [[t, rows.enc(e), encode_time(b)] for t, e, b in part["recent"]],
            "pending": [[encode_value(on_type, v), p, rows.enc(e)]
                        for v, p, e in part["pending"]],
            "exits": [[p, rows.enc_all(es)] for p, es in part["exits"].items()],
            "batch": rows.enc_all(part["batch"])}


def _dec_window(op, data) -> None:
    rows, keys, on_type = _window_codecs(op)
    op.buffer = deque([decode_time(t), rows.dec_all(rs)]
                      for t, rs in _list(data["buffer"], "buffer"))
    op.events = SortedDict({decode_time(t): {rows.dec(e): _delta(d) for e, d in _list(slot,
                                                                                    "slot")}
                            for t, slot in _list(data["events"], "events")})
    op.exits = deque((decode_time(t), rows.dec(e)) for t, e in _list(data["exits"], "exits"))
    op.parts = {keys.dec(k): _dec_part(part, rows, on_type)
                for k, part in _list(data["parts"], "parts")}
    op.bound = decode_time(data["bound"])


def _dec_part(data, rows, on_type) -> dict:
    _expect(isinstance(data, dict) and set(data) == _PART_FIELDS, "a window partition")
    return {"n": _count(data["n"]),
            "recent": deque((decode_time(t), rows.dec(e), decode_time(b))
                            for t, e, b in _list(data["recent"], "recent")),
            "pending": SortedList((decode_value(on_type, v), _count(p), rows.dec(e))
                                  for v, p, e in _list(data["pending"], "pending")),
            "exits": {_count(p): rows.dec_all(es) for p, es in _list(data["exits"], "exits")},
            "batch": rows.dec_all(data["batch"])}


def _delta(obj) -> int:
    _expect(type(obj) is int, f"{obj!r} is not a count")
    return obj


def _enc_setop(op) -> dict:
    rows = _Rows(op.heading)
    return {"bounds": [encode_time(b) for b in op.bounds],
            "pending": [[t, [[rows.enc(v), d, port] for v, d, port in slot]]
                        for t, slot in op.pending.items()],
            "out_bound": encode_time(op.out_bound),
            "holders": [[rows.enc(v), mask] for v, mask in op.holders.items()]}


def _dec_setop(op, data) -> None:
    rows = _Rows(op.heading)
    op.bounds = _bounds(data["bounds"], len(op.bounds))
    op.pending = SortedDict({decode_time(t): [(rows.dec(v), _delta(d), _port(port, op))
                                              for v, d, port in _list(slot, "slot")]
                             for t, slot in _list(data["pending"], "pending")})
    op.out_bound = decode_time(data["out_bound"])
    op.holders = {rows.dec(v): _count(mask) for v, mask in _list(data["holders"], "holders")}


def _port(obj, op) -> int:
    _expect(type(obj) is int and 0 <= obj < len(op.bounds), f"{obj!r} is not an input")
    return obj


def _enc_join(op) -> dict:
    left, right = _Rows(op.left_heading), _Rows(op.right_heading)
    return {"bounds": [encode_time(b) for b in op.bounds],
            "pending": [[t, [[left.enc(r), d] for r, d in dl], [[right.enc(r), d] for r, d in dr]]
                        for t, (dl, dr) in op.pending.items()],
            "out_bound": encode_time(op.out_bound),
            "left": left.enc_set(op.left.rows()),
            "right": None if op.static else right.enc_set(op.right.rows())}


def _dec_join(op, data) -> None:
    left, right = _Rows(op.left_heading), _Rows(op.right_heading)
    op.bounds = _bounds(data["bounds"], 2)
    op.pending = SortedDict({decode_time(t): ([(left.dec(r), _delta(d)) for r, d in dl],
                                              [(right.dec(r), _delta(d)) for r, d in dr])
                             for t, dl, dr in _list(data["pending"], "pending")})
    op.out_bound = decode_time(data["out_bound"])
    op.left.index = {}
    for row in left.dec_all(data["left"]):
        op.left.change(row, 1)
    if not op.static:
        op.right.index = {}
        for row in right.dec_all(data["right"]):
            op.right.change(row, 1)


def _summary_codecs(op):
    """Codecs of a summary's group keys, source tuples, output tuples and aggregate inputs."""
    node, h = op.node, op.src_heading
    key_names = [n for n in node.by if n not in node.using]
    inputs = [infer_type(e, node.source.heading) for _, _, e in node.specs]
    return (_Rows([h.type_of(n) for n in key_names]), _Rows(h), _Rows(op.heading),
            _Rows(inputs))


def _enc_summary(op, groups=None, values=None) -> dict:
    """``groups`` and ``values``: the summary's, in the general layout (by default its own)."""
    keys, members, out, inputs = _summary_codecs(op)
    groups = op.groups if groups is None else groups
    values = op.values if values is None else values
    encoded = []
    for k, (group_members, size, running) in groups.items():
        encoded.append([keys.enc(k),
                       None if group_members is None else members.enc_set(group_members), size,
                       [_enc_running(r, t) for r, t in zip(running, inputs.types)]])
    return {"groups": encoded, "values": [[keys.enc(k), out.enc(v)] for k, v in values.items()]}


def _enc_running(r, input_type):
    if r is None:
        return None
    if isinstance(r, _RunningSum):
        return {"sum": r.total}
    if isinstance(r, _RunningFloatSum):
        return {"exact": r.total, "inf": r.positive, "-inf": r.negative}
    if isinstance(r, _RunningExtreme):
        return {"values": [encode_value(input_type, v) for v in r.values]}
    if isinstance(r, _RunningLogic):
        return {"n": r.n, "true": r.true}
    raise InternalStreamError(operator="checkpoint", detail=f"cannot save {type(r).__name__}")


def _dec_summary(op, data) -> None:
    keys, members, out, inputs = _summary_codecs(op)
    aggs = op.functions()[1]
    op.groups = {}
    for k, group_members, size, running in _list(data["groups"], "groups"):
        key = keys.dec(k)
        states = _list(running, "running aggregates")
        _expect(len(states) == len(aggs), "one running state per aggregate")
        op.groups[key] = [None if group_members is None else set(members.dec_all(group_members)),
                          _delta(size),
                          [_dec_running(_Running.of(a), s, t)
                           for a, s, t in zip(aggs, states, inputs.types)]]
    op.values = {keys.dec(k): out.dec(v) for k, v in _list(data["values"], "values")}


def _dec_running(r, data, input_type):
    if r is None or data is None:
        _expect(r is None and data is None, "a running aggregate does not match its operator")
        return None
    _expect(isinstance(data, dict), "a running aggregate")
    if isinstance(r, _RunningSum):
        _expect(type(data.get("sum")) is int, "a running sum")
        r.total = data["sum"]
    elif isinstance(r, _RunningFloatSum):
        _expect(type(data.get("exact")) is int, "a running FLOAT sum")
        r.total, r.positive, r.negative = data["exact"], _count(data["inf"]), _count(data["-inf"])
    elif isinstance(r, _RunningExtreme):
        r.values = SortedList(decode_value(input_type, v) for v in _list(data["values"],
                                                                          "values"))
    else:
        r.n, r.true = _count(data["n"]), _count(data["true"])
    return r


def _enc_window_summary(op) -> dict:
    keys, _, _, inputs = _summary_codecs(op)
    rows = _Rows(op.src_heading)
    groups, values, exits = op.general_state()
    state = _enc_summary(op, groups, values)
    state.update({"buffer": [[t, rows.enc_all(rs)] for t, rs in op.buffer],
                  "exits": [[t, keys.enc(k), inputs.enc(v)] for t, k, v in exits],
                  "bound": encode_time(op.bound)})
    return state


def _dec_window_summary(op, data) -> None:
    keys, _, _, inputs = _summary_codecs(op)
    rows = _Rows(op.src_heading)
    _dec_summary(op, data)
    op.buffer = deque([decode_time(t), rows.dec_all(rs)]
                      for t, rs in _list(data["buffer"], "buffer"))
    op.load_general_state(op.groups, op.values,
                          [(decode_time(t), keys.dec(k), inputs.dec(v))
                           for t, k, v in _list(data["exits"], "exits")])
    op.bound = decode_time(data["bound"])


_STATES = {
    Source: (_no_state, _restore_nothing),
    StreamJoin: (_no_state, _restore_nothing),
    ToStream: (_no_state, _restore_nothing),
    RowMap: (_enc_rowmap, _dec_rowmap),
    StreamUngroup: (_enc_ungroup, _dec_ungroup),
    Merge: (_enc_merge, _dec_merge),
    Sink: (_enc_sink, _dec_sink),
    WindowOp: (_enc_window, _dec_window),
    TemporalSetOp: (_enc_setop, _dec_setop),
    TemporalJoin: (_enc_join, _dec_join),
    TemporalSummarize: (_enc_summary, _dec_summary),
    WindowSummarize: (_enc_window_summary, _dec_window_summary),
}


# ---------------------------------------------------------------------------------- loading

class _Decoder:
    """Builds a StreamEngine from checkpoint content; raises _Malformed (or a SiraError from a
    value's check) on anything it does not expect."""

    def __init__(self, fuse: bool = True):
        self.fuse = fuse

    def engine(self, content):
        from .runtime import StreamEngine
        engine = StreamEngine(self.fuse)
        for data in _list(content.get("streams"), "streams"):
            self.stream(engine, data)
        for data in _list(content.get("queries"), "queries"):
            self.query(engine, data)
        return engine

    def stream(self, engine, data):
        _expect(isinstance(data, dict), "a stream must be an object")
        name = data["name"]
        _expect(isinstance(name, str) and name not in engine.streams,
                f"stream name {name!r} missing or repeated")
        payload = heading_from_json(data["payload"])
        order = [n.lower() for n, _ in data["payload"]]
        stream = engine.create_stream(name, [(n, payload.type_of(n)) for n in order],
                                      data["rowtime"], data["arrival"])
        stream.clock = decode_time(data["clock"])
        stream.seq = _count(data["seq"], "an arrival counter")
        stream._passed = decode_time(data["passed"])
        stream.ended = data.get("ended", False)  # (absent from checkpoints before it)
        _expect(isinstance(stream.ended, bool), "a stream's end flag is not true or false")
        rows = _Rows(stream.heading)
        for p in _list(data["producers"], "producers"):
            state = self.producer(p, rows)
            _expect(state.name not in stream._states, f"producer {state.name!r} repeated")
            stream._states[state.name] = state
        active = _list(data["active"], "active producers")
        _expect(all(n in stream._states for n in active), "an active producer is not known")
        stream._producers = [stream._states[n] for n in active]

    @staticmethod
    def producer(data, rows) -> _ProducerState:
        _expect(isinstance(data, dict) and isinstance(data.get("name"), str)
                and type(data.get("attached")) is bool, "a producer")
        queue = deque((decode_time(t), rows.dec(body)) for t, body in _list(data["queue"],
                                                                             "queue"))
        return _ProducerState(data["name"], queue, decode_time(data["bound"]), data["attached"],
                              _count(data["seq"]), decode_time(data["last"]))

    def query(self, engine, data):
        from .runtime import QueryFailed, _Input, compile_query, parse_query
        _expect(isinstance(data, dict) and isinstance(data.get("text"), str), "a query")
        relations = {}
        for r in _list(data["relations"], "relations"):
            heading = heading_from_json(r["heading"])
            relations[r["name"]] = Relation(heading, frozenset(_Rows(heading).dec_all(r["body"])))
        catalog = {name: s.heading for name, s in engine.streams.items()}
        catalog.update(relations)
        node = parse_query(data["text"], catalog)
        _expect(type(data["keep"]) is bool, "keep must be true or false")
        query = compile_query(node, engine.streams, relations, data["keep"], self.fuse)
        self.operators(query, _list(data["operators"], "operators"))
        inputs = data["inputs"]
        _expect(isinstance(inputs, dict) and set(inputs) == set(query.streams),
                "the query's inputs do not match the streams it reads")
        for name, where in inputs.items():
            query.inputs[name] = _Input(_count(where["seq"]), decode_time(where["bound"]))
        if data["error"] is not None:
            _expect(isinstance(data["error"], str), "a failure is a text")
            query.error = QueryFailed(query=data["text"], error=data["error"])
            LOG.warning("restored continuous query %s had failed: %s", data["text"],
                        data["error"])
        engine._add(query)

    @staticmethod
    def operators(query, saved):
        ops = operators_of(query)
        _expect(len(ops) == len(saved) and all(
            isinstance(s, dict) and s.get("op") == type(op).__name__ for op, s in zip(ops, saved)),
            "the query's dataflow does not match the saved operators")
        for op, s in zip(ops, saved):
            _decode_ports(op, s["ports"])
            _expect(isinstance(s["state"], dict), "an operator state must be an object")
            _STATES[type(op)][1](op, s["state"])
