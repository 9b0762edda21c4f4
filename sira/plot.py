"""Timeline (Gantt) pictures of temporal relations and windows, drawn with matplotlib.

``timeline(relation, "during")`` draws one row per group of tuples and one bar per tuple, from
the interval's begin to its end; an interval unbounded above ("until further notice") runs to
the right edge and ends in an open arrow. Bars of one group that overlap are stacked in lanes,
so an unpacked relation shows every tuple and its PACK shows the merged periods::

    import matplotlib.pyplot as plt
    import sira
    from sira.plot import timeline

    fig, (before, after) = plt.subplots(2, 1, sharex=True)
    timeline(records, "during", by="name", ax=before)
    timeline(sira.evaluate("pack(R, (during))", {"r": records}), "during", by="name", ax=after)

A window operator's output is such a relation (``window(S, ts, range(10) slide(5))`` gives each
element the interval in which it is in the window). Window tables (``tumble``, ``hop``...) tag
elements with plain ``window_start`` / ``window_end`` attributes instead: draw them with
``timeline(t, start="window_start", end="window_end", by="seq")``.

matplotlib is an optional extra: ``pip install 'sira[plot]'``.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .errors import IntervalError, SiraTypeError, SiraValueError
from .intervals import IntervalType
from .types import DATE, FLOAT, TIMESTAMP, IntegerType, Type

OPERATOR = "TIMELINE"
BAR_HEIGHT = 0.8  # of a row; the lanes of a row share it
_POINT_TYPES = "INT, LONG, BIGINT, FLOAT, DATE or TIMESTAMP"


@attrs.frozen
class Bar:
    """One tuple's bar: its group, its lane in the group, where it begins and ends (``end``
    None: unbounded above), in matplotlib's x units."""

    group: int
    lane: int
    begin: float
    end: float | None
    text: str


def _matplotlib():
    """matplotlib, or MissingExtra naming the extra that installs it."""
    try:
        import matplotlib
        import matplotlib.dates  # noqa: F401 - used through matplotlib.dates
    except ImportError:
        from .errors import MissingExtra
        raise MissingExtra(package="matplotlib", extra="plot",
                           feature="sira.plot.timeline") from None
    return matplotlib


# ------------------------------------------------------------------------------- the data
def _names(value, what: str) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value.lower(),)
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return tuple(v.lower() for v in value)
    raise SiraTypeError(f"{OPERATOR}: {what} must be an attribute name or a list of names "
                        f"(got {value!r})", operator=OPERATOR, expected="attribute names",
                        got=repr(value))


def _interval_names(heading) -> tuple:
    return tuple(n for n, t in heading.attributes if isinstance(t, IntervalType))


def _check_point_type(name: str, t: Type) -> Type:
    if isinstance(t, IntegerType) or t in (FLOAT, DATE, TIMESTAMP):
        return t
    raise SiraTypeError(f"{OPERATOR}: attribute '{name}' is {t}, not a point in time "
                        f"({_POINT_TYPES})", operator=OPERATOR, expected=_POINT_TYPES,
                        got=str(t))


def _time_attributes(heading, interval, start, end) -> tuple:
    """(names holding time, point type, a function row -> (begin, end or None))."""
    if interval is not None and (start is not None or end is not None):
        raise SiraValueError(f"{OPERATOR}: give an interval attribute or start= and end=, "
                             f"not both", operator=OPERATOR, value=(interval, start, end))
    if (start is None) != (end is None):
        raise SiraValueError(f"{OPERATOR}: start= and end= go together (got start={start!r}, "
                             f"end={end!r})", operator=OPERATOR, value=(start, end))
    if start is not None:
        (start,), (end,) = _names(start, "start"), _names(end, "end")
        i, j = heading.index(start, OPERATOR), heading.index(end, OPERATOR)
        t = _check_point_type(start, heading.types[i])
        if heading.types[j] != t:
            raise SiraTypeError(f"{OPERATOR}: start '{start}' is {t} but end '{end}' is "
                                f"{heading.types[j]}", operator=OPERATOR, expected=str(t),
                                got=str(heading.types[j]))
        return (start, end), t, lambda row: (row[i], row[j])
    if interval is None:
        candidates = _interval_names(heading)
        if len(candidates) != 1:
            raise SiraValueError(
                f"{OPERATOR}: name the interval attribute to draw (the heading has "
                f"{', '.join(candidates) if candidates else 'none'}), or give start= and end=",
                operator=OPERATOR, value=candidates)
        interval = candidates[0]
    (interval,) = _names(interval, "the interval attribute")
    i = heading.index(interval, OPERATOR)
    t = heading.types[i]
    if not isinstance(t, IntervalType):
        raise SiraTypeError(f"{OPERATOR}: attribute '{interval}' is {t}, not an interval "
                            f"(give start= and end= for plain attributes)",
                            operator=OPERATOR, expected="an interval type", got=str(t))
    return (interval,), t.point, lambda row: (row[i].begin, row[i].end)


def _x(point_type: Type):
    """Points of a type as matplotlib x values."""
    if point_type in (DATE, TIMESTAMP):
        from matplotlib.dates import date2num
        return date2num
    return float


def _lanes(spans) -> list:
    """First-fit lanes: for each (begin, end) in order of begin, the lowest free lane."""
    lane_ends: list = []  # the end of the last bar of each lane (None: unbounded)
    out = []
    for begin, end in spans:
        for k, last in enumerate(lane_ends):
            if last is not None and last <= begin:
                lane_ends[k] = end
                out.append(k)
                break
        else:
            lane_ends.append(end)
            out.append(len(lane_ends) - 1)
    return out


def _group_text(heading, names, key) -> str:
    values = [heading.type_of(n).format(v) for n, v in zip(names, key)]
    if len(values) == 1:
        return values[0]
    return ", ".join(f"{n}={v}" for n, v in zip(names, values))


def layout(relation, interval=None, *, start=None, end=None, by=None, label=None) -> tuple:
    """What :func:`timeline` draws, without drawing it: ``(groups, bars, point type)``.

    ``groups`` are the row labels, top to bottom; ``bars`` one :class:`Bar` per tuple, in
    matplotlib x units. Needs no matplotlib for INT, LONG, BIGINT and FLOAT points.
    """
    heading = relation.heading
    time_names, point_type, span_of = _time_attributes(heading, interval, start, end)
    if by is None:
        group_names = tuple(n for n in heading.names if n not in time_names)
    else:
        group_names = heading.require(_names(by, "by"), OPERATOR)
    label_names = heading.require(_names(label, "label"), OPERATOR)
    group_pos = [heading.index(n) for n in group_names]
    label_pos = [heading.index(n) for n in label_names]
    to_x = _x(point_type)

    grouped: dict = {}
    for row in relation.sorted_body():
        begin, finish = span_of(row)
        if finish is not None and finish < begin:
            raise IntervalError(f"{OPERATOR}: end {point_type.format(finish)} is before start "
                                f"{point_type.format(begin)} in {row!r}", operator=OPERATOR,
                                value=(begin, finish))
        key = tuple(row[p] for p in group_pos)
        text = " ".join(heading.types[p].format(row[p]) for p in label_pos)
        grouped.setdefault(key, []).append((begin, finish, text))

    keys = sorted(grouped, key=lambda k: tuple(heading.type_of(n).sort_key(v)
                                               for n, v in zip(group_names, k)))
    groups, bars = [], []
    for g, key in enumerate(keys):
        groups.append(_group_text(heading, group_names, key))
        spans = sorted(grouped[key], key=lambda s: (s[0], s[1] is None, s[1] or s[0]))
        lanes = _lanes([(b, e) for b, e, _ in spans])
        for (begin, finish, text), lane in zip(spans, lanes):
            bars.append(Bar(g, lane, to_x(begin), None if finish is None else to_x(finish),
                            text))
    return groups, bars, point_type


# ------------------------------------------------------------------------------- drawing
def _right_edge(bars) -> tuple:
    """(where unbounded bars stop, how long their arrows are) in x units."""
    points = [b.begin for b in bars] + [b.end for b in bars if b.end is not None]
    low, high = min(points), max(points)
    span = (high - low) or 1.0
    return high + 0.12 * span, 0.06 * span


def timeline(relation, interval_attribute: str | None = None, *, start: str | None = None,
             end: str | None = None, by=None, label=None, ax=None, title: str | None = None):
    """Draw a temporal relation as a Gantt chart: one row per group, one bar per tuple.

    Args:
        relation: the relation to draw.
        interval_attribute: the interval attribute giving each bar; may be left out when the
            heading has exactly one.
        start, end: instead of an interval, two attributes of one point type holding each
            bar's begin and end (a window table's ``window_start`` and ``window_end``).
        by: the attribute(s) whose values make a row; default: every attribute except the
            time ones (so each distinct tuple apart from its time has a row). ``()``: one row.
        label: the attribute(s) whose values are written on each bar.
        ax: the matplotlib Axes to draw on; a new figure when None.
        title: the Axes' title.
    Returns:
        the matplotlib Axes. Bars are its ``patches`` (Rectangles) in the order of the rows
        and then of their begin; each unbounded end is an annotation with an open arrow.
    Raises:
        MissingExtra: matplotlib is not installed (``pip install 'sira[plot]'``).
        UnknownAttribute: a name is not an attribute of the relation.
        SiraTypeError: the interval attribute is not an interval, or start/end are not points
            of one type.
        SiraValueError: no interval attribute named and not exactly one in the heading, or an
            interval together with start/end.
        IntervalError: a tuple's end is before its start.
    """
    _matplotlib()
    groups, bars, point_type = layout(relation, interval_attribute, start=start, end=end,
                                      by=by, label=label)
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * max(1, len(groups))))
    _draw(ax, groups, bars)
    _label_axes(ax, relation, groups, point_type, interval_attribute, start, end, by, title)
    return ax


def _draw(ax, groups, bars) -> None:
    import matplotlib
    from matplotlib.patches import Rectangle
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    lanes: dict[int, int] = {}
    for bar in bars:
        lanes[bar.group] = max(lanes.get(bar.group, 0), bar.lane + 1)
    right, arrow = _right_edge(bars) if bars else (0.0, 0.0)
    for bar in bars:
        height = BAR_HEIGHT / lanes[bar.group]
        bottom = bar.group - BAR_HEIGHT / 2 + bar.lane * height
        finish = right if bar.end is None else bar.end
        color = colors[bar.group % len(colors)]
        ax.add_patch(Rectangle(
            (bar.begin, bottom + 0.05 * height), finish - bar.begin, 0.9 * height,
            facecolor=color, edgecolor="black", linewidth=0.6, alpha=0.85))
        middle = bottom + height / 2
        if bar.end is None:
            ax.annotate("", xy=(right + arrow, middle), xytext=(right, middle),
                        arrowprops={"arrowstyle": "->", "color": color, "linewidth": 1.5,
                                    "mutation_scale": 15})
        if bar.text:
            ax.text((bar.begin + finish) / 2, middle, bar.text, ha="center", va="center",
                    fontsize=8, clip_on=True)
    if bars:
        low = min(b.begin for b in bars)
        high = max([b.end for b in bars if b.end is not None] + [b.begin for b in bars])
        if any(b.end is None for b in bars):
            high = right + arrow
        pad = 0.02 * ((high - low) or 1.0)
        ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(max(len(groups), 1) - 0.5, -0.5)  # the first group at the top (one lane
    # of height when there is none: an empty relation draws empty axes, without a warning)
    ax.set_yticks(range(len(groups)))
    ax.set_yticklabels(groups)


def _label_axes(ax, relation, groups, point_type, interval, start, end, by, title) -> None:
    heading = relation.heading
    if point_type in (DATE, TIMESTAMP):
        ax.xaxis_date()
    if start is not None:
        ax.set_xlabel(f"{start.upper()} .. {end.upper()}")
    else:
        names = _interval_names(heading) if interval is None else (interval,)
        ax.set_xlabel(names[0].upper())
    if by is not None:
        ax.set_ylabel(", ".join(n.upper() for n in _names(by, "by")))
    if title is not None:
        ax.set_title(title)
    ax.grid(axis="x", linestyle=":", linewidth=0.5)


__all__ = ["Bar", "layout", "timeline"]
