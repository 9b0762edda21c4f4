"""``max_tuples`` on DuckDB: every operator the README's Limits name refuses to make more tuples
than the limit, in bounded memory, as on the Python engine (``sira.engine.guards``).

* A cartesian product's size is the product of its operands' sizes: they are counted first
  and an oversized product is refused before it runs, in about the time the Python engine
  takes, with memory near the inputs'.
* SPLWINDOW and WINDOWBY count the tuples their windows hold once the windows are made
  (:func:`held`: the sum of the lengths of their relation-valued lists; the windows spill to
  DuckDB's ``temp_directory`` when they pass its ``memory_limit``); under a time trigger, the
  sum of each tuple's ticks before they are made is the count (:func:`held_within`;
  ``sira.engine.spl.time_triggered``).
* Any other such operator (a keyed JOIN, UNGROUP, GROUP, the pointwise split, HOP and CUMULATE,
  RSTREAM) names its result as a materialized expression that reads at most ``max_tuples + 1``
  of its tuples (DuckDB stops making them there) and fails the query with ``TooManyTuples``
  when it got that one tuple too many. Under the limit the result is computed once and read
  from there, so a query pays almost nothing for the guard; past it DuckDB holds at most the
  limit's tuples, spilled to its ``temp_directory`` when they do not fit its ``memory_limit``.

    >>> import sira
    >>> r = sira.Relation.from_rows({"a": sira.INT}, [(1,), (2,), (3,)])
    >>> s = sira.Relation.from_rows({"b": sira.INT}, [(1,), (2,), (3,)])
    >>> sira.evaluate("join(R, S)", {"R": r, "S": s}, engine="duckdb", max_tuples=8)
    Traceback (most recent call last):
    ...
    sira.errors.TooManyTuples: JOIN: the result would hold more than 8 tuples (raise max_tuples to allow it)
"""

from __future__ import annotations

from sira.engine.guards import Guard, operator_label, windows_error

from .sql import sira_error


def guard_of(c, node) -> tuple:
    """(guard, making): the Guard of ``node``; inside a derived operator DuckDB lowers
    (DIVIDEBY), the guard names that operator and ``making`` the one inside it, as the Python
    engine does (``DIVIDEBY: its JOIN would make more than ...``)."""
    guard = Guard.of(node, c.options)
    outer = c.lowering[-1] if c.lowering else None
    if outer is None:
        return guard, None
    return Guard(operator_label(outer), guard.limit), f"its {guard.operator}"


def limited(c, node, sql: str, hint: str = "guarded", making: str | None = None) -> str:
    """The name of an expression holding ``sql``'s rows, the query failing with
    ``TooManyTuples`` (naming ``node``'s operator) when there are more than ``max_tuples``."""
    guard, inside = guard_of(c, node)
    rows = c.define(f"SELECT * FROM ({sql}) AS g LIMIT {guard.limit + 1}", hint,
                    materialized=True)
    return c.define(f"SELECT * FROM {rows} WHERE {within(guard, rows, inside or making)}", hint)


def within(guard, rows: str, making: str | None = None) -> str:
    """A predicate that fails the query with the guard's TooManyTuples when the expression
    ``rows`` (holding at most ``limit + 1`` rows) holds more than ``limit``."""
    fail = sira_error("TooManyTuples", guard.operator, guard.error(making).message)
    return (f"(SELECT CASE WHEN count(*) > {guard.limit} THEN {fail} ELSE TRUE END "
            f"FROM {rows})")


def held(c, node, sql: str, column: str = "tuples") -> str:
    """The name of an expression holding ``sql``'s windows (computed once), the query failing
    with TooManyTuples (naming ``node``'s operator) when their relation-valued ``column``
    holds more than ``max_tuples`` tuples, all windows together (SPLWINDOW, WINDOWBY)."""
    rows = c.define(sql, "windows", materialized=True)
    return c.define(f"SELECT * FROM {rows} WHERE {held_within(c, node, rows, f'len({column})')}",
                    "windows")


def held_within(c, node, rows: str, sizes: str) -> str:
    """A predicate failing the query with ``node``'s TooManyTuples when the sum of ``sizes``
    (an expression over ``rows``: what each row puts into the windows) is more than
    ``max_tuples``: the windows' tuples counted before they are made, where each row's share is
    known first (the ticks a tuple is in, under a time trigger)."""
    guard, _ = guard_of(c, node)
    return _sum_within(guard, rows, sizes, windows_error(guard).message)


def held_over(c, node, sizes: str) -> str:
    """An expression over a query's rows (TRUE) failing the query with ``node``'s TooManyTuples
    when the sum of ``sizes`` over all of them is more than ``max_tuples``: as
    :func:`held_within`, computed in the same pass as the rows (a window over them all), not
    by reading them again."""
    guard, _ = guard_of(c, node)
    return (f"CASE WHEN coalesce(sum({sizes}) OVER (), 0) > {guard.limit} THEN "
            f"{_fail(guard, windows_error(guard).message)} ELSE TRUE END")


def sized_within(c, node, rows: str, sizes: str) -> str:
    """A predicate failing the query with ``node``'s TooManyTuples when the sum of ``sizes``
    (an expression over ``rows``: the result's tuples each row makes, all distinct) is more
    than ``max_tuples``: counted before they are made (HOP and CUMULATE, where a slide far
    shorter than the size puts one element in billions of windows)."""
    guard, inside = guard_of(c, node)
    return _sum_within(guard, rows, sizes, guard.error(inside).message)


def _sum_within(guard, rows: str, sizes: str, message: str) -> str:
    return (f"(SELECT CASE WHEN coalesce(sum({sizes}), 0) > {guard.limit} THEN "
            f"{_fail(guard, message)} ELSE TRUE END FROM {rows})")


def _fail(guard, message: str) -> str:
    """SQL failing the query with the guard's TooManyTuples saying ``message``."""
    return sira_error("TooManyTuples", guard.operator, message)


def counted(c, node, sql: str, making: str | None = None) -> str:
    """A predicate failing the query when ``sql`` (rows to count, made by ``node`` but not
    its result) holds more than ``max_tuples`` rows; DuckDB stops counting past the limit."""
    guard, inside = guard_of(c, node)
    return within(guard, f"(SELECT 1 FROM ({sql}) AS g LIMIT {guard.limit + 1}) AS n",
                  inside or making)


def refuse_product(c, node, operands) -> None:
    """Refuse, before it runs, a cartesian product of the named ``operands`` holding more than
    ``max_tuples`` tuples (their sizes multiplied, counted now)."""
    guard, inside = guard_of(c, node)
    counts = ", ".join(f"(SELECT count(*) FROM {name})" for name in operands)
    sizes = c.fetch(f"SELECT {counts}", node)[0]
    product = 1
    for size in sizes:
        product *= size
    guard.check(product, inside)
