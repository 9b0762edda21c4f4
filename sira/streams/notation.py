"""The seeds' stream listings (``stream(...)``, ``deltas(...)``) as relations: the parser lives
in :mod:`sira.syntax.notation`, with the rest of the text syntax; this module keeps the name
under which the README and the tutorial import it.

    >>> r = parse_stream("schema: v int\\n 1 10\\n 2 11")
    >>> r.to_rows()[0]
    {'seq': 1, 'ts': 1, 'v': 10}
"""

from __future__ import annotations

from ..syntax.notation import parse_deltas, parse_stream

__all__ = ["parse_deltas", "parse_stream"]
