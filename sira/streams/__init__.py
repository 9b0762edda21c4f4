"""Streams: named streams with producers and rowtime bounds, the seeds' stream notation, and an
incremental runtime for continuous queries whose results always equal the batch algebra.

    >>> from sira.streams import StreamEngine, LateRowError
"""

from .named import LateRowError, NamedStream, Producer, ProducerPosition, StreamError
from .operators import InternalStreamError
from .runtime import LiveQuery, NotSupportedLive, QueryFailed, StreamEngine, StreamPosition

__all__ = ["InternalStreamError", "LateRowError", "LiveQuery", "NamedStream", "NotSupportedLive",
           "Producer", "ProducerPosition", "QueryFailed", "StreamEngine", "StreamError",
           "StreamPosition"]
