"""Timeline pictures: what is drawn (bars, their extents, arrows), never pixels."""

from __future__ import annotations

import datetime
import sys

import pytest

import sira
from sira import DATE, DATEINTERVAL, INT, INTINTERVAL, STRING, Interval, Relation
from sira.demo import catalog
from sira.errors import (IntervalError, MissingExtra, SiraTypeError, SiraValueError,
                         UnknownAttribute)

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.dates import date2num  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from sira.plot import layout, timeline  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def db():
    return catalog()


def bars(ax) -> list:
    """(x begin, x end, y middle) of each bar, in drawing order."""
    return [(p.get_x(), p.get_x() + p.get_width(), p.get_y() + p.get_height() / 2)
            for p in ax.patches if isinstance(p, Rectangle)]


def arrows(ax) -> list:
    """The annotations drawn with an open arrow (unbounded ends)."""
    return [t for t in ax.texts
            if getattr(t, "arrow_patch", None) is not None and t.arrowprops["arrowstyle"] == "->"]


def row_labels(ax) -> list:
    return [t.get_text() for t in ax.get_yticklabels()]


RECORDS = Relation.from_rows({"name": STRING, "during": INTINTERVAL}, [
    ("Ann", Interval(1, 5)), ("Ann", Interval(3, 8)), ("Ann", Interval(8, 10)),
    ("Ann", Interval(20, 25)), ("Bob", Interval(2, 6)), ("Bob", Interval(12, None))])


# ------------------------------------------------------------------------------- bars
def test_one_bar_per_tuple_and_one_row_per_group():
    ax = timeline(RECORDS, "during", by="name")
    assert len(bars(ax)) == 6
    assert row_labels(ax) == ["Ann", "Bob"]
    assert {(b, e) for b, e, _ in bars(ax)} >= {(1, 5), (3, 8), (8, 10), (20, 25), (2, 6)}


def test_a_relation_before_and_after_pack():
    before = timeline(RECORDS, "during", by="name")
    packed = sira.evaluate("pack(R, (during))", {"r": RECORDS})
    after = timeline(packed, "during", by="name")
    assert len(bars(before)) == len(RECORDS) == 6
    assert len(bars(after)) == len(packed) == 4
    finite = sorted((b, e) for b, e, _ in bars(after) if e < 25.5)
    assert finite == [(1, 10), (2, 6), (20, 25)]


def test_overlapping_bars_of_a_group_are_stacked_in_lanes_and_packed_ones_are_not():
    _, drawn, _ = layout(RECORDS, "during", by="name")
    ann = [b for b in drawn if b.group == 0]
    assert sorted(b.lane for b in ann) == [0, 0, 0, 1]  # [3, 8) overlaps [1, 5)
    packed = sira.evaluate("pack(R, (during))", {"r": RECORDS})
    _, drawn, _ = layout(packed, "during", by="name")
    assert {b.lane for b in drawn} == {0}


def test_an_unbounded_end_runs_to_the_right_edge_and_ends_in_an_open_arrow():
    ax = timeline(RECORDS, "during", by="name")
    (arrow,) = arrows(ax)
    unbounded = [(b, e) for b, e, _ in bars(ax) if b == 12]
    ((begin, end),) = unbounded
    assert end > 25  # beyond every bounded point
    assert arrow.xyann[0] == pytest.approx(end)  # the arrow starts where the bar stops
    assert arrow.xy[0] > end
    assert ax.get_xlim()[1] >= arrow.xy[0]


def test_bounded_relations_draw_no_arrow():
    r = Relation.from_rows({"x": INTINTERVAL}, [(Interval(1, 3),)])
    assert arrows(timeline(r)) == []


def test_labels_are_written_on_the_bars():
    ax = timeline(RECORDS, "during", by=(), label="name")
    texts = sorted(t.get_text() for t in ax.texts if t.get_text())
    assert texts == ["Ann"] * 4 + ["Bob"] * 2
    assert row_labels(ax) == [""]


def test_by_defaults_to_every_attribute_but_the_time():
    r = Relation.from_rows({"k": INT, "v": STRING, "x": INTINTERVAL},
                           [(1, "a", Interval(0, 2)), (1, "b", Interval(0, 2)),
                            (2, "a", Interval(1, 3))])
    assert row_labels(timeline(r)) == ["k=1, v=a", "k=1, v=b", "k=2, v=a"]


def test_dates_are_drawn_on_a_date_axis():
    d = datetime.date
    r = Relation.from_rows({"name": STRING, "during": DATEINTERVAL},
                           [("Bob Beamon", Interval(d(1968, 7, 24), d(1998, 6, 18)))])
    ((begin, end, _),) = bars(timeline(r, "during"))
    assert (begin, end) == (date2num(d(1968, 7, 24)), date2num(d(1998, 6, 18)))


def test_it_draws_on_the_axes_it_is_given():
    fig, ax = plt.subplots()
    assert timeline(RECORDS, "during", ax=ax, title="records") is ax
    assert ax.get_title() == "records"


# ------------------------------------------------------------------------------- windows
def test_a_cql_window_shows_when_each_element_is_in_the_window(db):
    w = sira.evaluate("window(S, ts, unit(millisecond) range(10 seconds) slide(5 seconds))", db)
    ax = timeline(w, "during", by="seq", label="c1")
    assert row_labels(ax) == [str(i) for i in range(1, 9)]
    expected = {row["seq"]: (row["during"].begin, row["during"].end) for row in w.to_rows()}
    drawn = {int(round(y)) + 1: (b, e) for b, e, y in bars(ax)}
    assert drawn == expected
    assert drawn[1] == (5000, 15000)  # Example 4-9: 1000 enters at 5000, leaves at 15000


def test_a_range_unbounded_window_draws_arrows(db):
    w = sira.evaluate("window(S, ts, unit(millisecond) range(unbounded))", db)
    ax = timeline(w, "during", by="seq")
    assert len(arrows(ax)) == len(w) == 8


def test_a_window_table_draws_each_element_in_each_of_its_windows(db):
    t = sira.evaluate("hop(S, ts, size(10000) slide(5000))", db)
    ax = timeline(t, start="window_start", end="window_end", by="seq")
    assert len(bars(ax)) == len(t) == 16
    expected = sorted((row["window_start"], row["window_end"]) for row in t.to_rows())
    assert sorted((b, e) for b, e, _ in bars(ax)) == expected
    _, drawn, _ = layout(t, start="window_start", end="window_end", by="seq")
    assert {b.lane for b in drawn} == {0, 1}  # two overlapping hops per element
    assert ax.get_xlabel() == "WINDOW_START .. WINDOW_END"


def test_a_tumbling_window_table_grouped_by_window():
    s = Relation.from_rows({"ts": INT, "v": INT}, [(1, 10), (4, 11), (12, 12)])
    t = sira.evaluate("tumble(S, ts, size(5))", {"s": s})
    ax = timeline(t, start="window_start", end="window_end", by="window_start", label="v")
    assert sorted((b, e) for b, e, _ in bars(ax)) == [(0, 5), (0, 5), (10, 15)]
    assert row_labels(ax) == ["0", "10"]


# ------------------------------------------------------------------------------- errors
def test_an_attribute_that_is_not_an_interval_is_refused():
    with pytest.raises(SiraTypeError) as err:
        timeline(RECORDS, "name")
    assert "'name'" in str(err.value)


def test_unknown_attributes_are_refused():
    with pytest.raises(UnknownAttribute) as err:
        timeline(RECORDS, "during", by="nosuch")
    assert err.value.attribute == "nosuch"
    with pytest.raises(UnknownAttribute):
        timeline(RECORDS, "nosuch")


def test_the_interval_must_be_named_when_there_is_not_exactly_one():
    r = Relation.from_rows({"x": INTINTERVAL, "y": INTINTERVAL}, [])
    with pytest.raises(SiraValueError) as err:
        timeline(r)
    assert "x, y" in str(err.value)


def test_start_and_end_must_go_together_and_not_with_an_interval():
    with pytest.raises(SiraValueError):
        timeline(RECORDS, start="during")
    with pytest.raises(SiraValueError):
        timeline(RECORDS, "during", start="during", end="during")


def test_start_and_end_must_be_points_of_one_type():
    r = Relation.from_rows({"a": INT, "b": DATE, "s": STRING}, [])
    with pytest.raises(SiraTypeError):
        timeline(r, start="a", end="b")
    with pytest.raises(SiraTypeError):
        timeline(r, start="s", end="s")


def test_an_end_before_its_start_is_refused():
    r = Relation.from_rows({"a": INT, "b": INT}, [(5, 3)])
    with pytest.raises(IntervalError):
        timeline(r, start="a", end="b")


def test_without_matplotlib_timeline_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtra) as err:
        timeline(RECORDS, "during")
    assert err.value.extra == "plot" and "sira[plot]" in str(err.value)


def test_an_empty_relation_draws_empty_axes_without_a_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warned of identical low and high y limits
        ax = sira.plot.timeline(Relation.from_rows({"k": STRING, "iv": INTINTERVAL}, []), "iv")
    assert not [p for p in ax.patches if isinstance(p, Rectangle)]
    plt.close(ax.figure)
