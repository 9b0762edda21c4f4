"""The garbage collector pause (sira.collector): off inside, restored after, also on errors
and in nested or repeated decorated calls."""

import gc

import pytest

from sira.collector import collector_paused


@collector_paused()
def _nested(depth, seen):
    seen.append(gc.isenabled())
    if depth:
        _nested(depth - 1, seen)
    if depth == 0:
        raise ValueError("inner")


def test_a_decorated_call_pauses_the_collector_and_restores_it_even_when_it_raises():
    assert gc.isenabled()
    seen = []
    with pytest.raises(ValueError):
        _nested(2, seen)
    assert seen == [False, False, False]
    assert gc.isenabled()


def test_a_collector_already_off_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Cycle:
    def __init__(self):
        self.me = self


def test_garbage_cycles_made_between_pauses_are_still_freed():
    """Reference cycles made outside the pause (here 40,000) must be collected as usual; a
    resume that moved every tracked object to the oldest generation kept them all alive."""
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(4000):
        for _ in range(10):
            _Cycle()
        with collector_paused():
            pass
    assert len(gc.get_objects()) - before < 5000
