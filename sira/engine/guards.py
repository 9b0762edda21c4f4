"""Result-size guards: the ``max_tuples`` option.

Every operator whose result can be much larger than its inputs counts the tuples it makes
*while* it makes them and raises :class:`~sira.errors.TooManyTuples` (naming the operator and
the limit) as soon as the count passes the caller's limit, so a runaway query stops early with
its memory bounded by about the limit instead of growing until the machine gives out:

* JOIN (cartesian products, joins inside DIVIDEBY, LEFTJOIN): the exact size of a hash join
  (the sum over join keys of left count x right count) is known from the index before any
  result tuple is built, so an oversized join is refused before it starts;
* TCLOSE and GTCLOSE: the closure so far, checked every few thousand new tuples;
* UNPACK: the points to make, counted before unpacking;
* the pointwise splits (split-point normalisation of INTERSECT, MINUS, XMINUS, the joins and
  SUMMARIZEBY on interval attributes, PACK on several attributes): the pieces, row by row;
* UNGROUP: the tuples unnested so far (several RVAs at once multiply); GROUP: the tuples it
  nests in its relation-valued attributes;
* the window tables that put an element in several windows (HOP, CUMULATE) and RSTREAM: the
  tuples made so far (one tuple's windows or instants are refused before they are made);
* SPLWINDOW and WINDOWBY (with a relation-valued result): the tuples their windows hold, all
  windows together, counted window by window as the stream is read (a sliding window of N
  tuples emitted at every tuple holds each tuple N times).

The limit is ``max_tuples`` (default :data:`DEFAULT_MAX_TUPLES`, 50 million), passed per call::

    >>> import sira
    >>> r = sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,), (3,)])
    >>> s = sira.Relation.from_rows({"b": sira.INT}, [(1,), (2,), (3,)])
    >>> len(sira.evaluate("join(R, S)", {"R": r, "S": s}))
    9
    >>> try:
    ...     sira.evaluate("join(R, S)", {"R": r, "S": s}, max_tuples=8)
    ... except sira.errors.TooManyTuples as err:
    ...     print(err)
    JOIN: the result would hold more than 8 tuples (raise max_tuples to allow it)

The count is of distinct tuples, so the limit is exact: an operator whose result holds exactly
``max_tuples`` tuples passes, one more is refused (a split is refused when the split relation,
not the final result, passes it). Operators that cannot make more tuples than they read
(RESTRICT, PROJECT, UNION, SEMIJOIN, SUMMARIZEBY...) are not counted, nor is a JOIN one of
whose operands has no attribute the other lacks (a semijoin: :func:`join_is_counted`).

On Spark, TCLOSE and GTCLOSE count the closure after every round (a round is computed whole
before it is counted), UNPACK and JOIN count before they run (a JOIN from its operands' counts
per key), and the other operators count their result before the rest of the query runs
(``sira_spark.guards``). A SUMMARIZEBY over a HOP window table that DuckDB and Spark aggregate
by panes never makes the HOP's tuples, so there it is not refused for them; the Python engine
makes them and counts them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import SiraTypeError, SiraValueError, TooManyTuples

#: The default limit on the tuples one operator may produce: large enough for real work.
DEFAULT_MAX_TUPLES = 50_000_000

#: a limit no relation reaches, that DuckDB and Spark still count against as a LONG
NO_LIMIT = 2 ** 62


def max_tuples(options: dict) -> int:
    """The caller's ``max_tuples`` option (a non-negative integer), or the default.

        >>> max_tuples({}), max_tuples({"max_tuples": 10})
        (50000000, 10)

    Raises:
        SiraTypeError: the option is not an integer.
        SiraValueError: it is negative.
    """
    value = options.get("max_tuples")
    if value is None:
        return DEFAULT_MAX_TUPLES
    if isinstance(value, bool) or not isinstance(value, int):
        raise SiraTypeError(f"max_tuples must be an integer (got {value!r})",
                            operator="max_tuples", expected="a non-negative integer",
                            got=repr(value))
    if value < 0:
        raise SiraValueError(f"max_tuples must not be negative (got {value})",
                             operator="max_tuples", value=value)
    # past 2**62 no relation can reach it: the limit stays a LONG for the SQL engines (a
    # limit of 10**30 made DuckDB's count overflow)
    return min(value, NO_LIMIT)



#: the options one evaluation takes, on every engine
OPTIONS = ("max_tuples", "nulls", "rewrite")


def check_options(options: dict, known=OPTIONS) -> None:
    """Refuse an option no engine knows, naming the closest one, and a bad ``nulls`` policy.

        >>> check_options({"max_tupels": 3})
        Traceback (most recent call last):
        ...
        sira.errors.SiraValueError: unknown option 'max_tupels' (did you mean max_tuples?); the options are max_tuples, nulls, rewrite

    Raises:
        SiraValueError: an unknown option, or ``nulls`` other than ``"error"``/``"drop"``.
        SiraTypeError: ``rewrite`` other than True or False.
    """
    from ..errors import closest_names
    for name in options:
        if name not in known:
            near = closest_names(str(name), known)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise SiraValueError(f"unknown option {name!r}{hint}; the options are "
                                 f"{', '.join(sorted(known))}", operator="options", value=name)
    check_flag("rewrite", options.get("rewrite", True), "rewrite")  # "no" is no False
    nulls = options.get("nulls", "error")
    if nulls not in ("error", "drop"):
        raise SiraValueError(f"nulls must be 'error' or 'drop' (got {nulls!r})",
                             operator="nulls", value=nulls)


def check_flag(name: str, value, operator: str) -> bool:
    """``value`` if it is True or False; a promise such as ``trust_unique`` given as ``"no"``
    (which Python takes as true) is refused.

    Raises:
        SiraTypeError: anything but a bool.
    """
    if not isinstance(value, bool):
        raise SiraTypeError(f"{name} must be True or False (got {value!r})", operator=operator,
                            expected="True or False", got=repr(value))
    return value


def checked_expression(expr):
    """``expr`` as an engine evaluates it: text, an algebra tree or a scalar expression tree
    as they are, a Relation as its literal.

    Raises:
        SiraTypeError: anything else (a number, bytes, None...).
    """
    from ..algebra.node import Node
    from ..expressions.nodes import Expr
    from ..values import Relation
    if isinstance(expr, (str, Node, Expr)):
        return expr
    if isinstance(expr, Relation):
        from ..algebra.basic import RelationLiteral
        return RelationLiteral(expr)
    raise SiraTypeError(f"the expression to evaluate is of type {type(expr).__name__}; give text "
                        f"(\"project(r, (a))\"), a tree (sira.relvar(...).project(...)) or a "
                        f"Relation", operator="evaluate", expected="an expression",
                        got=type(expr).__name__)


def check_relvars(relvars) -> None:
    """Refuse relvars that are not a mapping name -> value (a list of pairs...), or that
    name one relvar twice (:func:`check_relvar_names`).

    Raises:
        SiraTypeError: not a mapping.
        SiraValueError: two keys equal but for case.
    """
    if relvars is not None and not isinstance(relvars, Mapping):
        raise SiraTypeError(f"relvars must be a mapping name -> relation (got one of type "
                            f"{type(relvars).__name__})", operator="relvars",
                            expected="a mapping", got=type(relvars).__name__)
    check_relvar_names(relvars)


def check_relvar_names(relvars) -> None:
    """Refuse relvar names (a mapping's keys, or the names themselves) naming one relvar
    twice (names are case-insensitive, so ``{"s": r1, "S": r2}`` would silently give one of
    them).

        >>> check_relvar_names({"s": 1, "S": 2})
        Traceback (most recent call last):
        ...
        sira.errors.SiraValueError: relvar 's' is given twice (as 's' and 'S'; relvar names are case-insensitive)

    Raises:
        SiraValueError: two keys equal but for case.
    """
    if not relvars:
        return
    seen = {}
    for name in relvars:
        key = name.lower() if isinstance(name, str) else name
        if key in seen:
            raise SiraValueError(f"relvar {key!r} is given twice (as {seen[key]!r} and "
                                 f"{name!r}; relvar names are case-insensitive)",
                                 operator="relvars", value=name)
        seen[key] = name


def operator_label(node) -> str:
    """The operator's name as the user wrote it: ``JOINUSING`` for a join with a USING list."""
    name = node.operator_name
    if getattr(node, "using", None) is not None:
        return name + "USING"
    return name


class Guard:
    """One operator's limit: ``check(count)`` raises TooManyTuples once ``count`` passes it."""

    __slots__ = ("operator", "limit")

    def __init__(self, operator: str, limit: int = DEFAULT_MAX_TUPLES):
        self.operator = operator
        self.limit = limit

    @classmethod
    def of(cls, node, options: dict) -> "Guard":
        """The guard of ``node`` under the evaluation's options."""
        return cls(operator_label(node), max_tuples(options))

    def check(self, count: int, making: str | None = None) -> None:
        """Raise TooManyTuples when ``count`` is over the limit.

        ``making`` says what would hold the tuples when it is not the result
        (``"splitting the intervals at their boundaries"``).
        """
        if count > self.limit:
            raise self.error(making)

    def counted(self, items):
        """``items`` as they come, refused as soon as there are more than the limit (for items
        known to be distinct, such as the (element, window) pairs of a window table)."""
        limit = self.limit
        for n, item in enumerate(items, 1):
            if n > limit:
                raise self.error()
            yield item

    def error(self, making: str | None = None, hint: str = "",
              verb: str = "make") -> TooManyTuples:
        """The TooManyTuples error of this guard; ``hint`` is appended to its message,
        ``verb`` says what ``making`` does with the tuples (``"hold"`` for :data:`WINDOWS`)."""
        if making is None and not hint:
            return TooManyTuples(operator=self.operator, limit=self.limit)
        what = f"{making} would {verb}" if making else "the result would hold"
        return TooManyTuples(f"{self.operator}: {what} more than {self.limit} tuples (raise "
                             f"max_tuples to allow it){hint}", operator=self.operator,
                             limit=self.limit)


def join_is_counted(left, right) -> bool:
    """Whether a natural join of operands of headings ``left`` and ``right`` counts against
    ``max_tuples``: not when one heading's attributes are all in the other (TABLE_DEE and
    TABLE_DUM, an equal heading), as such a join is a semijoin of the wider operand and makes
    no more tuples than that operand holds. Every engine asks this.

        >>> from sira import INT
        >>> from sira.values import Heading
        >>> ab, a = Heading.of({"a": INT, "b": INT}), Heading.of({"a": INT})
        >>> join_is_counted(ab, a), join_is_counted(a, Heading.of({"c": INT}))
        (False, True)
    """
    return not (set(left.names) <= set(right.names) or set(right.names) <= set(left.names))


def inner_join_is_counted(lowering) -> bool:
    """Whether a JOIN an engine compiles under ``lowering`` (the derived operators it is
    compiling as their definitions, innermost last) counts against ``max_tuples``: not the
    overlap join a pointwise SEMIJOIN or SEMIMINUS is lowered to
    (``sira.algebra.derived.semi_as_overlap_join``), which counts its own result instead, as
    the Python engine counts the pieces it keeps and nothing else (a SEMIMINUS whose left
    operand is mostly covered keeps few).

        >>> from sira import relvar, INT, INTINTERVAL
        >>> l = relvar("l", {"k": INT, "x": INTINTERVAL})
        >>> inner_join_is_counted([]), inner_join_is_counted([l.semiminus(l)])
        (True, False)
    """
    from ..algebra.joins import SemiJoin, SemiMinus
    return not (lowering and isinstance(lowering[-1], (SemiJoin, SemiMinus)))


def compiled_within(c, node, parts) -> list:
    """DuckDB and Spark: each of ``parts`` (trees ``node`` is computed through) compiled by the
    engine's compiler ``c`` with ``node`` on its ``lowering`` stack, so a guard inside names
    ``node`` (``LEFTJOIN: its JOINUSING would make ...``) and the rules of
    :func:`inner_join_is_counted` see it."""
    c.lowering.append(node)
    try:
        return [c.compile(part) for part in parts]
    finally:
        c.lowering.pop()


def kept_for_reuse(node, lowering) -> bool:
    """Whether an engine's compiler may keep what it compiled for ``node`` under ``lowering``
    (see :func:`inner_join_is_counted`) and hand it to an equal node elsewhere in the query:
    not a JOIN compiled uncounted, so that a user's equal JOIN is compiled again, counted.

        >>> from sira import relvar, INT, INTINTERVAL
        >>> l = relvar("l", {"k": INT, "x": INTINTERVAL})
        >>> kept_for_reuse(l.join(l), []), kept_for_reuse(l.join(l), [l.semiminus(l)])
        (True, False)
    """
    from ..algebra.joins import Join
    return not isinstance(node, Join) or inner_join_is_counted(lowering)


#: What a pointwise split makes, for the messages.
SPLITTING = "splitting the intervals at their boundaries"

#: What SPLWINDOW and WINDOWBY count: the tuples their windows' relation-valued attributes hold,
#: all windows together (a sliding window holds a tuple in each window it is in).
WINDOWS = "its windows"


def windows_error(guard: Guard) -> TooManyTuples:
    """The TooManyTuples error of a window operator whose windows hold too many tuples.

        >>> print(windows_error(Guard("SPLWINDOW", 8)))
        SPLWINDOW: its windows would hold more than 8 tuples (raise max_tuples to allow it)
    """
    return guard.error(WINDOWS, verb="hold")
