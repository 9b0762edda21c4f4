"""Pausing Python's cyclic garbage collector while sira makes millions of small objects.

Bodies are sets of tuples and tuples of plain values: they form no reference cycles, so the
cyclic collector never frees any of them, yet each collection it starts while a body is being
built scans every object made so far. On a million-tuple body those scans cost more than the
work itself. The batch engine, a train of rows passing through a live stream and the Arrow
conversions therefore run with the collector paused; reference counting still frees
everything as usual, and the collector resumes (if it was on) when the work ends, also on an
error.

The objects made while paused stay in the youngest generation, so the first collection after
the pause scans them once: a linear cost. Moving them straight to the oldest generation
(``gc.freeze()`` then ``gc.unfreeze()``) avoids that scan but hides every garbage cycle made
since the last collection from the counts that start a full collection: in a program calling
sira in a loop those cycles (Py4J proxies of Spark objects among them) were never freed.

    >>> import gc
    >>> with collector_paused():
    ...     gc.isenabled()
    False
"""

from __future__ import annotations

import contextlib
import gc


class collector_paused(contextlib.ContextDecorator):
    """A context manager (or, called, a function decorator): the cyclic garbage collector is
    off inside it, and back to what it was when it ends (nested uses leave it off until the
    outermost ends)."""

    def _recreate_cm(self):  # each decorated call keeps its own state
        return type(self)()

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc) -> None:
        if self.was_enabled:
            gc.enable()
