"""Rows: a node's result handed from an operator to its one parent before it is a set, and
the functions that take values out of body tuples by position.

    >>> row_getter([2, 0])((1, 2, 3)), key_getter([1])((1, 2, 3))
    ((3, 1), 2)
"""

from __future__ import annotations

from operator import itemgetter

from ..values import Relation


def row_getter(positions):
    """A function from a body tuple to the tuple of the values at ``positions``."""
    positions = tuple(positions)
    if len(positions) == 0:
        return lambda row: ()
    if len(positions) == 1:
        (i,) = positions
        return lambda row: (row[i],)
    return itemgetter(*positions)


def key_getter(positions):
    """A hashable key of the values at ``positions``: a scalar for one position (cheaper)."""
    positions = tuple(positions)
    if len(positions) == 1:
        return itemgetter(positions[0])
    return row_getter(positions)


def project_body(body, positions):
    positions = tuple(positions)
    if len(positions) == 0:
        return frozenset({()}) if body else frozenset()
    if len(positions) == 1:
        return frozenset(zip(map(itemgetter(positions[0]), body)))
    return frozenset(map(itemgetter(*positions), body))


class Rows:
    """A node's result as rows not yet made a set.

    ``rows`` is a collection (list, set or frozenset: it may be read more than once) of body
    tuples of ``heading``; ``distinct`` says no two are equal. The heading may be wider than
    the node's (a PROJECT hands on its input's rows; the extra attributes are projected away
    when the rows become a relation), or narrower when the caller asked only for some
    attributes (``Context.rows(node, wanted)``). Projected on the node's heading, the rows hold
    exactly the node's result, maybe several times.

        >>> from sira.types import INT
        >>> r = Relation.from_rows({"a": INT, "b": INT}, [(1, 2), (1, 3)])
        >>> sorted(Rows.of(r).body(r.heading.project(["a"])))
        [(1,)]
    """

    __slots__ = ("heading", "rows", "distinct")

    def __init__(self, heading, rows, distinct: bool):
        self.heading = heading
        self.rows = rows
        self.distinct = distinct

    @classmethod
    def of(cls, relation: Relation) -> "Rows":
        return cls(relation.heading, relation.body, True)

    def exact(self, heading) -> bool:
        """Whether the rows are the body of a relation of ``heading``, each tuple once."""
        return self.distinct and self.heading == heading

    def getter(self, names):
        """A function from one of the rows to the tuple of its values of ``names``."""
        index = self.heading.index
        return row_getter([index(n) for n in names])

    def body(self, heading) -> frozenset:
        """The rows projected on ``heading`` (whose names they all hold), as a set."""
        if self.heading == heading:
            rows = self.rows
            return rows if type(rows) is frozenset else frozenset(rows)
        index = self.heading.index
        return project_body(self.rows, [index(n) for n in heading.names])

    def projected(self, heading):
        """The rows projected on ``heading`` (duplicates kept): an iterable, read once."""
        if self.heading == heading:
            return self.rows
        return map(self.getter(heading.names), self.rows)

    def narrowed(self, heading) -> "Rows":
        """These rows with exactly the attributes of ``heading`` (duplicates kept)."""
        if self.heading == heading:
            return self
        return Rows(heading, list(self.projected(heading)), False)

    def distinct_on(self, heading) -> "Rows":
        """These rows as the body of a relation of ``heading``: each tuple once."""
        if self.exact(heading):
            return self
        return Rows(heading, self.body(heading), True)
