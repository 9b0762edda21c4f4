"""Heading, Tuple, Relation, TABLE_DEE and TABLE_DUM: immutable, hashable, equal by value.

A relation is a heading plus a frozen set of tuples. Inside, a tuple of a relation's body is a
plain Python tuple holding the values in the order of the heading's (sorted) attribute names;
:class:`Tuple` is the user-facing value.

    >>> from sira.types import INT, STRING
    >>> r = Relation.from_rows({"filename": STRING, "pagesize": INT},
    ...                        [("BW_SPOTS.SPDB", 16384), ("BW_SPOTS.SPDB", 16384)])
    >>> len(r)
    1
    >>> print(r)
    +---------------+----------+
    | FILENAME      | PAGESIZE |
    | STRING        | INT      |
    +---------------+----------+
    | BW_SPOTS.SPDB | 16384    |
    +---------------+----------+
    1 tuple
"""

from __future__ import annotations

import datetime
import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress, repeat
from operator import add, attrgetter, is_not, itemgetter, lt
from typing import Any, Union

import attrs

from .errors import (DuplicateAttribute, HeadingMismatch, SiraError, SiraTypeError,
                     UnknownAttribute)
from .intervals import Interval, IntervalType
from .types import (BooleanType, DateType, FloatType, IntegerType, RelationType, StringType,
                    TimestampType, TupleType, Type, type_named)

HeadingLike = Union["Heading", Mapping[str, Union[Type, str]],
                    Iterable[tuple[str, Union[Type, str]]]]
"""What a heading may be given as: a Heading, a mapping name -> type (or type name), or
(name, type) pairs."""

RowLike = Union[Mapping[str, Any], Sequence[Any], "Tuple"]
"""What a row may be given as: a mapping by attribute name, a sequence of values, a Tuple."""


def normalize_name(name: str) -> str:
    """Attribute and relvar names are case-insensitive; sira keeps them in lowercase."""
    if not isinstance(name, str) or not name:
        raise SiraTypeError(f"an attribute name must be a non-empty string (got {name!r})",
                            expected="a name", got=repr(name))
    return name.lower()


def type_text(t: Type) -> str:
    """A type in the text syntax: ``int``, ``relation(heading(a(int)))``..."""
    if isinstance(t, RelationType):
        return f"relation({t.heading.literal()})"
    if isinstance(t, TupleType):
        return f"tuple({t.heading.literal()})"
    return t.name.lower()


def _canonical(attributes) -> bool:
    """Whether ``attributes`` is a heading's own form: a tuple of (name, Type) pairs with
    lowercase names in strictly ascending order."""
    if type(attributes) is not tuple:
        return False
    last = None
    for pair in attributes:
        if type(pair) is not tuple or len(pair) != 2:
            return False
        name, t = pair
        if type(name) is not str or not name or name != name.lower() or \
                (last is not None and name <= last) or not isinstance(t, Type):
            return False
        last = name
    return True


@attrs.frozen(cache_hash=True, repr=False, slots=False)
class Heading:
    """A set of (name, type) pairs, kept sorted by name.

    >>> from sira.types import INT, STRING
    >>> h = Heading.of({"PageSize": INT, "filename": STRING})
    >>> h.names
    ('filename', 'pagesize')
    >>> str(h)
    '{filename: STRING, pagesize: INT}'
    """

    attributes: tuple = ()

    def __attrs_post_init__(self):
        # the canonical form (a tuple of (lowercase name, Type) pairs sorted by name) is kept
        # as given; anything else (a mapping, a list, unsorted pairs) goes through ``of``
        if not _canonical(self.attributes):
            object.__setattr__(self, "attributes", Heading.of(self.attributes).attributes)

    @classmethod
    def of(cls, spec: HeadingLike) -> "Heading":
        """A heading from a Heading, a mapping name -> type (or type name), or (name, type) pairs.

        Raises:
            DuplicateAttribute: a name appears twice (names are case-insensitive).
        """
        if isinstance(spec, Heading):
            return spec
        if isinstance(spec, Mapping):
            pairs = spec.items()
        elif isinstance(spec, Iterable) and not isinstance(spec, (str, bytes)):
            pairs = spec
        else:
            raise SiraTypeError(f"{spec!r} is not a heading (a Heading, a mapping name -> type, "
                                f"or (name, type) pairs)", expected="a heading", got=repr(spec))
        seen = {}
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise SiraTypeError(f"{pair!r} in a heading is not a (name, type) pair",
                                    expected="a (name, type) pair", got=repr(pair))
            name, t = pair
            key = normalize_name(name)
            if key in seen:
                raise DuplicateAttribute(attribute=key, operator="HEADING")
            seen[key] = type_named(t) if isinstance(t, str) else t
            if not isinstance(seen[key], Type):
                raise SiraTypeError(f"attribute '{key}': {t!r} is not a sira type",
                                    expected="a type", got=repr(t))
        return cls(tuple(sorted(seen.items())))

    @functools.cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.attributes)

    @functools.cached_property
    def types(self) -> tuple[Type, ...]:
        return tuple(t for _, t in self.attributes)

    @property
    def degree(self) -> int:
        return len(self.attributes)

    def __len__(self) -> int:
        return len(self.attributes)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._positions

    @functools.cached_property
    def _positions(self) -> dict:
        return {n: i for i, (n, _) in enumerate(self.attributes)}

    def index(self, name: str, operator: str | None = None) -> int:
        """Position of an attribute in the body's tuples. Raises UnknownAttribute."""
        key = name.lower()
        if key in self._positions:
            return self._positions[key]
        raise UnknownAttribute(attribute=key, operator=operator, available=self.names)

    def type_of(self, name: str, operator: str | None = None) -> Type:
        return self.attributes[self.index(name, operator)][1]

    def __getitem__(self, name: str) -> Type:
        return self.type_of(name)

    def require(self, names: Iterable[str], operator: str | None = None) -> tuple[str, ...]:
        """Lowercased names, each checked to be in this heading and to appear once."""
        out = []
        for name in names:
            key = normalize_name(name)
            if key not in self._positions:
                raise UnknownAttribute(attribute=key, operator=operator, available=self.names)
            if key in out:
                raise DuplicateAttribute(attribute=key, operator=operator)
            out.append(key)
        return tuple(out)

    def project(self, names: Iterable[str], operator: str | None = None) -> "Heading":
        keep = set(self.require(names, operator))
        return Heading(tuple(a for a in self.attributes if a[0] in keep))

    def without(self, names: Iterable[str], operator: str | None = None) -> "Heading":
        drop = set(self.require(names, operator))
        return Heading(tuple(a for a in self.attributes if a[0] not in drop))

    def extend(self, pairs: Iterable[tuple[str, Type]],
               operator: str | None = None) -> "Heading":
        """This heading plus new (name, type) pairs; a name already present is an error."""
        attrs_ = dict(self.attributes)
        for name, t in pairs:
            key = normalize_name(name)
            if key in attrs_:
                raise DuplicateAttribute(attribute=key, operator=operator)
            attrs_[key] = t
        return Heading(tuple(sorted(attrs_.items())))

    def rename(self, mapping: Mapping[str, str], operator: str | None = None) -> "Heading":
        """Parallel rename: only the names after all renaming must be distinct."""
        old = self.require(mapping.keys(), operator)
        new = {o: normalize_name(n) for o, n in zip(old, mapping.values())}
        out = {}
        for name, t in self.attributes:
            target = new.get(name, name)
            if target in out:
                raise DuplicateAttribute(attribute=target, operator=operator)
            out[target] = t
        return Heading(tuple(sorted(out.items())))

    def common(self, other: "Heading", operator: str | None = None) -> tuple[str, ...]:
        """Names in both headings, checked to have the same type in both."""
        mine = dict(self.attributes)
        names = []
        for name, t in other.attributes:
            if name in mine:
                if mine[name] != t:
                    raise SiraTypeError(
                        f"{operator + ': ' if operator else ''}attribute '{name}' is "
                        f"{mine[name]} on the left but {t} on the right",
                        operator=operator, expected=str(mine[name]), got=str(t))
                names.append(name)
        return tuple(names)

    def union(self, other: "Heading", operator: str | None = None) -> "Heading":
        self.common(other, operator)
        return Heading(tuple(sorted(dict(self.attributes + other.attributes).items())))

    def require_equal(self, other: "Heading", operator: str) -> None:
        if self != other:
            raise HeadingMismatch(operator=operator, left=str(self), right=str(other))

    def __str__(self) -> str:
        return "{" + ", ".join(f"{n}: {t}" for n, t in self.attributes) + "}"

    def __repr__(self) -> str:
        return f"Heading({str(self)})"

    def literal(self) -> str:
        """The heading in the text syntax: ``heading(a(int) b(string))``."""
        return "heading(" + " ".join(f"{n}({type_text(t)})" for n, t in self.attributes) + ")"

    def sort_key_function(self) -> Callable[[tuple], tuple] | None:
        """A function mapping a body tuple to a key that orders tuples canonically."""
        keys = [t.sort_key for t in self.types]
        identity = Type.sort_key
        if all(type(t).sort_key is identity for t in self.types):
            return None
        return lambda row: tuple(k(v) for k, v in zip(keys, row))


@attrs.frozen(cache_hash=True, repr=False)
class Tuple:
    """A tuple value: a heading and one value per attribute.

    >>> from sira.types import INT
    >>> t = Tuple.from_dict({"a": INT}, {"A": 1})
    >>> t["a"], t.to_dict()
    (1, {'a': 1})
    """

    heading: Heading
    values: tuple

    def __attrs_post_init__(self):
        # Tuple(Heading, tuple) is trusted (the engines' values, in ``heading.names`` order);
        # anything else (a mapping for the heading, a dict or list of values) is checked
        if type(self.heading) is not Heading or type(self.values) is not tuple:
            checked = next(iter(Relation.from_rows(self.heading, [self.values]).body))
            object.__setattr__(self, "heading", Heading.of(self.heading))
            object.__setattr__(self, "values", checked)

    @classmethod
    def from_dict(cls, heading: HeadingLike, values: Mapping[str, Any]) -> "Tuple":
        heading = Heading.of(heading)
        return cls(heading, check_row(heading, values))

    def __getitem__(self, name: str) -> Any:
        return self.values[self.heading.index(name)]

    def to_dict(self) -> dict[str, Any]:
        return dict(zip(self.heading.names, self.values))

    def sort_key(self) -> tuple:
        return tuple(t.sort_key(v) for t, v in zip(self.heading.types, self.values))

    def __repr__(self) -> str:
        return tuple_literal(self.heading, self.values)


def value_literal(t: Type, v) -> str:
    return t.literal(v)


def tuple_literal(heading: Heading, values) -> str:
    return "tuple(" + " ".join(f"{n}({value_literal(t, v)})"
                               for (n, t), v in zip(heading.attributes, values)) + ")"


def check_row(heading: Heading, row, operator=None) -> tuple:
    """Validate one row (a mapping by name, or a sequence in heading order) into a body tuple."""
    if isinstance(row, Tuple):
        row.heading.require_equal(heading, operator or "RELATION")
        return row.values
    if isinstance(row, Mapping):
        given = {normalize_name(k): v for k, v in row.items()}
        if len(given) < len(row):  # {"a": 1, "A": 2}: names are case-insensitive
            raise DuplicateAttribute(attribute=next(
                k for k in given if sum(normalize_name(n) == k for n in row) > 1),
                operator=operator or "ROW")
        extra = set(given) - set(heading.names)
        if extra:
            raise UnknownAttribute(attribute=sorted(extra)[0], operator=operator,
                                   available=heading.names)
        missing = [n for n in heading.names if n not in given]
        if missing:
            raise SiraTypeError(f"{operator + ': ' if operator else ''}no value for attribute "
                                f"'{missing[0]}' (sira has no nulls)", operator=operator,
                                expected=f"a value for {missing[0]}", got="nothing")
        values = [given[n] for n in heading.names]
    else:
        if isinstance(row, (str, bytes)) or not isinstance(row, Iterable):
            raise SiraTypeError(f"{operator + ': ' if operator else ''}a row must be a mapping "
                                f"by attribute name or a sequence of values (got {row!r})",
                                operator=operator, expected="a mapping or a sequence",
                                got=repr(row))
        values = list(row)
        if len(values) != heading.degree:
            raise SiraTypeError(f"{operator + ': ' if operator else ''}a row of {len(values)} "
                                f"values for a heading of {heading.degree} attributes {heading}",
                                operator=operator, expected=str(heading.degree),
                                got=str(len(values)))
    out = []
    for (name, t), v in zip(heading.attributes, values):
        try:
            out.append(t.check(v, operator=operator))
        except SiraError as err:
            raise type(err)(f"attribute '{name}': {err.message}",
                            **err.field_values()) from None
    return tuple(out)


def written_order(spec) -> tuple | None:
    """The attribute names of a heading spec in the order the caller wrote them (a mapping's or
    a list of pairs' order), or None for a :class:`Heading` (which is sorted by name).

        >>> written_order({"Name": "string", "dept": "string"})
        ('name', 'dept')
    """
    if isinstance(spec, Heading):
        return None
    Heading.of(spec)  # what is not a heading is refused there, naming it
    pairs = spec.items() if isinstance(spec, Mapping) else spec
    return tuple(normalize_name(name) for name, _ in pairs)


def positional_reorder(heading: Heading, order) -> tuple | None:
    """For each attribute of ``heading`` (sorted), its position in the caller's ``order``;
    None when the two orders agree (no reordering needed)."""
    if order is None or tuple(order) == heading.names:
        return None
    where = {name: i for i, name in enumerate(order)}
    return tuple(where[name] for name in heading.names)


def reorder_row(row, positions: tuple, heading: Heading):
    """A positional row given in the caller's order, as a sequence in ``heading``'s order;
    mappings and :class:`Tuple` values are returned as they are (they name their values)."""
    if isinstance(row, (Mapping, Tuple)) or isinstance(row, (str, bytes)):
        return row
    values = tuple(row)
    if len(values) != len(positions):
        return values  # check_row reports the wrong number of values
    return tuple(values[i] for i in positions)


# ---------------------------------------------------------------- the fast path of from_rows
# Rows that are already values of the right Python types are checked a column at a time, by
# loops that run in C (the set of the values' types, the least and greatest INT...). Anything
# else, or any column that does not pass, sends every row through check_row, which raises the
# error naming the first bad row and attribute.

def typed_body(heading: Heading, rows: list, positions: tuple | None) -> frozenset | None:
    """The body of ``rows`` when they are all dicts with exactly the heading's (lowercase)
    names, or all tuples or lists of the heading's degree (in the caller's order: see
    :func:`positional_reorder`), holding values that need no conversion; else None.

        >>> from sira.types import INT, STRING
        >>> h = Heading.of({"a": INT, "b": STRING})
        >>> sorted(typed_body(h, [{"a": 1, "b": "x"}, {"b": "y", "a": 2}], None))
        [(1, 'x'), (2, 'y')]
        >>> typed_body(h, [{"a": 1, "b": 2}], None) is None   # check_row will say why
        True
    """
    tuples = _as_tuples(heading, rows, positions)
    if tuples is None:
        return None
    columns = [list(map(itemgetter(i), tuples)) for i in range(heading.degree)]
    checked = [_checked_column(t, column) for t, column in zip(heading.types, columns)]
    if any(column is None for column in checked):
        return None
    if any(new is not old for new, old in zip(checked, columns)):
        return frozenset(zip(*checked))
    return frozenset(tuples)


def _as_tuples(heading: Heading, rows: list, positions: tuple | None) -> list | None:
    """The rows as tuples in the heading's order, when they are all dicts with exactly its
    names or all tuples or lists of its degree; else None."""
    degree = heading.degree
    kinds = set(map(type, rows))
    if degree == 0 or not kinds or not kinds <= {dict, tuple, list} or \
            set(map(len, rows)) != {degree}:
        return None
    if kinds == {dict}:
        try:  # a dict of ``degree`` keys holding every name holds no other key
            if degree == 1:
                return list(zip(map(itemgetter(heading.names[0]), rows)))
            return list(map(itemgetter(*heading.names), rows))
        except KeyError:
            return None
    if dict in kinds:
        return None
    if positions is not None:
        return list(zip(map(itemgetter(positions[0]), rows))) if degree == 1 else \
            list(map(itemgetter(*positions), rows))
    return rows if kinds == {tuple} else list(map(tuple, rows))


def _checked_column(t: Type, column: list) -> list | None:
    """``column`` (or its normalised copy) when every value is already a value of ``t``, by
    checks that run in C; None when some value is not, or when the column's type has no such
    check."""
    kinds = set(map(type, column))
    if isinstance(t, IntegerType):
        if kinds != {int}:
            return None
        if t.bits is not None and (min(column) < t.min or max(column) > t.max):
            return None
        return column
    if isinstance(t, (StringType, BooleanType, DateType)):
        return column if kinds == {_PYTHON_TYPES[type(t)]} else None
    if isinstance(t, TimestampType):  # naive timestamps only (aware ones are converted)
        if kinds != {datetime.datetime} or any(map(attrgetter("tzinfo"), column)):
            return None
        return column
    if isinstance(t, FloatType):
        if kinds != {float} or any(map(math.isnan, column)):
            return None
        return list(map(add, column, repeat(0.0)))  # -0.0 becomes 0.0, as check does
    if isinstance(t, IntervalType) and kinds == {Interval} and not isinstance(t.point,
                                                                              FloatType):
        return column if _intervals_fit(t.point, column) else None
    return None


def _intervals_fit(point: Type, column: list) -> bool:
    """Whether intervals (none empty) have points of type ``point`` needing no conversion and
    every bounded one ends after it begins."""
    begins = list(map(itemgetter(0), column))
    ends = list(map(itemgetter(1), column))
    bounded = list(map(is_not, ends, repeat(None)))
    ends = list(compress(ends, bounded))
    if _checked_column(point, begins) is not begins:
        return False
    if ends and _checked_column(point, ends) is not ends:
        return False
    return all(map(lt, compress(begins, bounded), ends))


_PYTHON_TYPES = {StringType: str, BooleanType: bool, DateType: datetime.date}


class Relation:
    """A relation value: a heading and a set of tuples. Immutable and hashable.

    >>> from sira.types import INT
    >>> Relation.from_rows({"a": INT}, [{"a": 2}, {"a": 1}]).to_rows()
    [{'a': 1}, {'a': 2}]
    """

    __slots__ = ("heading", "body", "_hash")
    heading: Heading
    body: frozenset[tuple]
    _hash: int | None

    def __init__(self, heading: HeadingLike, body: Iterable[RowLike] = frozenset()) -> None:
        """The relation of ``heading`` holding the tuples of ``body``.

        Given a :class:`Heading` and a frozenset, the body is trusted: each element must be a
        checked value tuple in the order of ``heading.names`` (this is how the engines build
        their results). Anything else is checked as :meth:`from_rows` checks it::

            >>> from sira.types import INT
            >>> Relation({"a": INT}, [{"a": 1}, {"a": 1}, {"a": 2}]).cardinality
            2

        Raises:
            SiraTypeError, UnknownAttribute: as :meth:`from_rows`, for a body checked here.
        """
        if type(heading) is not Heading or type(body) is not frozenset:
            checked = Relation.from_rows(heading, body)
            heading, body = checked.heading, checked.body
        object.__setattr__(self, "heading", heading)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name, value):
        raise AttributeError("Relation values are immutable")

    @classmethod
    def from_rows(cls, heading: HeadingLike, rows: Iterable[RowLike] = ()) -> "Relation":
        """A relation from a heading and rows (mappings by name, or sequences by position).

        A positional row's values follow the order in which the heading was written: a
        mapping's order, or a list of ``(name, type)`` pairs' order::

            >>> from sira.types import STRING
            >>> Relation.from_rows({"name": STRING, "dept": STRING},
            ...                    [("Alice", "Sales")]).to_rows()
            [{'dept': 'Sales', 'name': 'Alice'}]

        A :class:`Heading` object keeps no such order (it is a set of attributes, sorted by
        name), so positional rows given with one follow its ``names`` (alphabetical order)::

            >>> h = Heading.of({"name": STRING, "dept": STRING})
            >>> h.names
            ('dept', 'name')
            >>> Relation.from_rows(h, [("Sales", "Alice")]).to_rows()
            [{'dept': 'Sales', 'name': 'Alice'}]

        Args:
            heading: a mapping name -> type (or type name), a list of (name, type) pairs, or a
                Heading.
            rows: the tuples, each a mapping by attribute name, a :class:`Tuple`, or a sequence
                of values in the order described above; duplicates collapse into one.
        Returns:
            the relation.
        Raises:
            SiraTypeError: a value does not fit its attribute's type, or a row has the wrong
                number of values.
            UnknownAttribute: a row names an attribute not in the heading.
        """
        order = written_order(heading)
        heading = Heading.of(heading)
        positions = positional_reorder(heading, order)
        rows = rows if type(rows) is list else list(rows)
        body = typed_body(heading, rows, positions)
        if body is not None:
            return cls(heading, body)
        if positions is None:
            return cls(heading, frozenset(check_row(heading, row) for row in rows))
        return cls(heading, frozenset(check_row(heading, reorder_row(row, positions, heading))
                                      for row in rows))

    @property
    def cardinality(self) -> int:
        return len(self.body)

    def __len__(self) -> int:
        return len(self.body)

    def __bool__(self) -> bool:
        return bool(self.body)

    def sorted_body(self) -> list[tuple]:
        key = self.heading.sort_key_function()
        return sorted(self.body, key=key)

    def __iter__(self) -> Iterator[Tuple]:
        heading = self.heading
        return (Tuple(heading, row) for row in self.sorted_body())

    def __contains__(self, row: object) -> bool:
        try:
            return check_row(self.heading, row) in self.body
        except Exception:
            return False

    def to_rows(self) -> list[dict[str, Any]]:
        """The tuples as dicts, in a deterministic (sorted) order."""
        names = self.heading.names
        return [dict(zip(names, row)) for row in self.sorted_body()]

    def sort_key(self) -> tuple:
        key = self.heading.sort_key_function() or (lambda row: row)
        return (len(self.body), tuple(sorted(key(row) for row in self.body)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Relation):
            return NotImplemented
        return self.heading == other.heading and self.body == other.body

    def __hash__(self) -> int:
        value = self._hash
        if value is None:
            value = hash((self.heading, self.body))
            object.__setattr__(self, "_hash", value)
        return value

    def literal(self) -> str:
        """The whole relation in the text syntax; ``sira.parse`` gives it back.

            >>> from sira.types import INT
            >>> Relation.from_rows({"a": INT}, [(2,), (1,)]).literal()
            'relation(heading(a(int)) body(tuple(a(1)) tuple(a(2))))'
        """
        rows = " ".join(tuple_literal(self.heading, row) for row in self.sorted_body())
        return f"relation({self.heading.literal()} body({rows}))"

    def __repr__(self) -> str:
        """The relation literal, cut after the first 20 tuples of each relation in it.

        A cut text ends its body with ``... and M more tuples``, which ``sira.parse`` refuses;
        :meth:`literal` gives the whole text.
        """
        from .display import relation_repr
        return relation_repr(self)

    def __str__(self) -> str:
        """The table of :meth:`to_table` with its default limit (20 tuples)."""
        return self.to_table()

    def to_table(self, limit: int | None = 20) -> str:
        """The relation as a text table, as the seed draws it, cut after ``limit`` tuples.

            >>> from sira.types import INT
            >>> r = Relation.from_rows({"a": INT}, [(i,) for i in range(30)])
            >>> print(r.to_table(limit=1))
            +-----+
            | A   |
            | INT |
            +-----+
            | 0   |
            +-----+
            ... and 29 more tuples
            30 tuples
            >>> len(r.to_table(limit=None).splitlines())   # every tuple: 30 rows, 6 other lines
            36

        Args:
            limit: how many tuples to draw, first in the canonical order; None draws them all.
        Returns:
            the names, the types, the tuples, ``... and M more tuples`` when some are left out,
            and the cardinality.
        Raises:
            SiraValueError: ``limit`` is neither a non-negative integer nor None.
        """
        from .display import format_table
        return format_table(self, limit=limit)

    def _repr_html_(self) -> str:
        """The relation as an HTML table for notebooks (Jupyter calls this): the heading with
        types, the first 20 tuples in the canonical order, ``… and M more tuples``, the
        cardinality. Values are HTML-escaped."""
        from .display import html_table
        return html_table(self)

    def __reduce__(self):
        return (Relation, (self.heading, self.body))

    # ------------------------------------------------------------------ I/O (sira.io)
    def to_pandas(self) -> Any:
        """The relation as a pandas DataFrame (see :func:`sira.io.to_pandas`).

            >>> from sira.types import INT
            >>> Relation.from_rows({"a": INT}, [(2,), (1,)]).to_pandas()["a"].tolist()
            [1, 2]
        """
        from .io import to_pandas
        return to_pandas(self)

    def to_arrow(self) -> Any:
        """The relation as a ``pyarrow.Table`` (see :func:`sira.io.to_arrow`)."""
        from .io import to_arrow
        return to_arrow(self)

    def write_csv(self, target: Any, **options: Any) -> None:
        """Write the relation as CSV with ``name:type`` headers (see :func:`sira.io.write_csv`)."""
        from .io import write_csv
        write_csv(self, target, **options)

    def write_json(self, target: Any, **options: Any) -> None:
        """Write the relation as ``{"heading", "body"}`` JSON (see :func:`sira.io.write_json`)."""
        from .io import write_json
        write_json(self, target, **options)

    def write_parquet(self, target: Any) -> None:
        """Write the relation as a Parquet file (see :func:`sira.io.write_parquet`)."""
        from .io import write_parquet
        write_parquet(self, target)


TABLE_DEE = Relation(Heading(), frozenset({()}))
TABLE_DUM = Relation(Heading(), frozenset())
