"""Pausing Python's cyclic garbage collector while sira makes millions of small objects.

Bodies are sets of tuples and tuples of plain values: they form no reference cycles, so the
cyclic collector never frees any of them, yet each collection it starts while a body is being
built scans every object made so far. On a million-tuple body those scans cost more than the
work itself. The batch engine, a train of rows passing through a live stream and the Arrow
conversions therefore run with the collector paused; reference counting still frees
everything as usual, and the collector resumes (if it was on) when the work ends, also on an
error.

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
            _promote_young()
            gc.enable()


def _promote_young() -> None:
    """Move every object the collector tracks into its oldest generation, without a scan.

    While it was paused the collector kept counting the objects made, so the first one made
    after it resumes would start a young collection scanning all of them (a million-tuple
    result: about as long as the work that made it, and longer per object the more there are,
    as they no longer fit the caches). ``freeze`` then ``unfreeze`` moves them to the oldest
    generation in constant time and resets the counts; they are scanned at the next full
    collection, as any long-lived data, and garbage cycles among them are freed there. Skipped
    when the program has frozen objects of its own (``unfreeze`` would release them)."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
