"""What a reader did besides building the relation: rows read, duplicates collapsed, rows left
out under ``nulls="drop"``, timestamps converted to UTC. Also the NULL/NaN policy itself.

    >>> report = ReadReport()
    >>> tally = NullTally()
    >>> tally.note("price", "NaN", 3)
    >>> tally.apply("drop", "prices.csv", report)
    {3}
    >>> report.dropped_by_attribute
    {'price': 1}
    >>> tally.apply("error", "prices.csv", report)
    Traceback (most recent call last):
    ...
    sira.errors.NullValue: relvar 'prices.csv': attribute 'price' holds NaN in 1 row; sira has no nulls (pass nulls='drop' to leave those rows out)
"""

from __future__ import annotations

import attrs

from ..errors import DataFormatError, NullValue

NULL_POLICIES = ("error", "drop")


@attrs.define
class ReadReport:
    """Filled in by a reader given ``report=``: pass an empty one, read, then look.

    ``rows`` counts the data rows read, ``tuples`` the tuples of the relation;
    ``rows == tuples + duplicates + dropped``.

        >>> import io, sira
        >>> report = sira.ReadReport()
        >>> r = sira.read_csv(io.StringIO("a:int\\n1\\n1\\n2\\n"), report=report)
        >>> report.rows, report.tuples, report.duplicates
        (3, 2, 1)
    """

    source: str | None = None
    rows: int = 0
    tuples: int = 0
    duplicates: int = 0
    dropped: int = 0
    dropped_by_attribute: dict = attrs.Factory(dict)
    converted_to_utc: int = 0

    def finish(self, rows: int, tuples: int, dropped: int) -> None:
        self.rows, self.tuples, self.dropped = rows, tuples, dropped
        self.duplicates = rows - dropped - tuples


class NullTally:
    """The rows holding a NULL or a NaN, per attribute, in the order attributes were noted."""

    def __init__(self):
        self.rows: dict = {}  # attribute -> {row: kind}

    def __bool__(self):
        return any(self.rows.values())

    def note(self, attribute: str, kind: str, row) -> None:
        """Row ``row`` holds a ``kind`` ("NULL" or "NaN") in ``attribute``."""
        self.rows.setdefault(attribute, {}).setdefault(row, kind)

    def bad_rows(self) -> set:
        out = set()
        for rows in self.rows.values():
            out.update(rows)
        return out

    def apply(self, policy: str, relvar, report: ReadReport | None) -> set:
        """The rows to leave out; raises :class:`NullValue` when ``policy`` is "error"."""
        check_policy(policy)
        if not self:
            return set()
        if policy == "error":
            attribute, rows = next((a, r) for a, r in self.rows.items() if r)
            kinds = set(rows.values())
            value = kinds.pop() if len(kinds) == 1 else "NULL or NaN"
            raise NullValue(relvar=relvar, attribute=attribute, count=len(rows), value=value)
        bad = self.bad_rows()
        if report is not None:
            report.dropped_by_attribute = {a: len(r) for a, r in self.rows.items() if r}
        return bad


def check_policy(policy) -> None:
    if policy not in NULL_POLICIES:
        raise DataFormatError(f"nulls={policy!r}: the NULL/NaN policy is 'error' (the default) "
                              f"or 'drop'", value=policy)
