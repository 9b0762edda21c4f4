"""Streams: named streams with producers and rowtime bounds, the seeds' stream notation, and an
incremental runtime for continuous queries whose results always equal the batch algebra.

    >>> from sira.streams import StreamEngine, LateRowError
"""

from .named import LateRowError, NamedStream, Producer, StreamError
from .runtime import LiveQuery, NotSupportedLive, StreamEngine

__all__ = ["LateRowError", "LiveQuery", "NamedStream", "NotSupportedLive", "Producer",
           "StreamEngine", "StreamError"]
