"""The library's own Python implementations, registered as DuckDB functions for the inputs
DuckDB's built-ins treat differently from Python.

DuckDB's ``lower``/``upper`` map one code point to one (Python's ``str.lower`` also knows 'ß'
-> 'SS' and the final sigma), and its casts do not read Python's number syntax (``int('1_000')``,
``float(' 1e5 ')`` with Unicode blanks, Unicode digits). The SQL translations take DuckDB's path
for the common case (ASCII text, plain digits) and call these functions only for the rest, so
results are Python's exactly. ``the_string`` of a tuple or relation value (its literal text)
goes through Python too. A failure raises the library's error, carried through DuckDB as
``SIRA|Class|operator|message``.

    >>> _py_int(" 1_000 ", "int")
    '1000'
"""

from __future__ import annotations

import hashlib

import duckdb

from sira.errors import SiraError

from .convert import from_duckdb_value
from .types import duckdb_type

_REGISTERED = "sira_py_lower"


def _carry(err: SiraError) -> ValueError:
    operator = getattr(err, "operator", None) or ""
    message = err.message.replace("\n", " ")
    return ValueError(f"SIRA|{type(err).__name__}|{operator}|{message}")


def _py_lower(s: str) -> str:
    return s.lower()


def _py_upper(s: str) -> str:
    return s.upper()


def _py_int(s: str, type_name: str) -> str:
    """The integer Python's ``int(s.strip())`` reads (as text), or the library's error."""
    from sira.expressions.library import resolve
    from sira.types import STRING
    _, parse = resolve(type_name, (STRING,))
    try:
        return str(parse(s))
    except SiraError as err:
        raise _carry(err) from None


def _py_float(s: str) -> float:
    from sira.expressions.library import resolve
    from sira.types import STRING
    _, parse = resolve("float", (STRING,))
    try:
        return parse(s)
    except SiraError as err:
        raise _carry(err) from None


def _py_float_sum(lists):
    """Each list's FLOAT sum (:func:`sira.expressions.library.float_sum`), vectorised over an
    Arrow list array (a NULL list stays NULL)."""
    import pyarrow as pa

    from sira.expressions.library import float_sum
    out = []
    for values in lists.to_pylist():
        try:
            out.append(None if values is None else float_sum(values))
        except SiraError as err:
            raise _carry(err) from None
    return pa.array(out, pa.float64())


def _py_float_round(limbs, which, pos, neg):
    """The FLOAT sums a sweep kept exactly (:func:`sira_duckdb.aggregation._float_segments`):
    per row, sum ``which``'s limbs of the list (each ``(hi * 2**64 + lo) * 2**(32 * b)`` in
    units of 2**-1074; NULL: none) and round once; its counts of +inf and -inf decide first.
    NULL counts (a row no sum is asked of) give NULL."""
    import pyarrow as pa

    from sira.expressions.library import float_total
    out = []
    for lst, j, p, n in zip(limbs.to_pylist(), which.to_pylist(), pos.to_pylist(),
                            neg.to_pylist()):
        if p is None:
            out.append(None)
            continue
        total = sum(((x["hi"] << 64) + x["lo"]) << (32 * x["b"]) for x in lst or ()
                    if x["j"] == j)
        try:
            out.append(float_total(total, p, n))
        except SiraError as err:
            raise _carry(err) from None
    return pa.array(out, pa.float64())


def install(con) -> None:
    """Register the string and number functions on a connection (once)."""
    rows = con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = ?",
                       [_REGISTERED]).fetchall()
    if rows[0][0]:
        return
    varchar, double = duckdb.sqltype("VARCHAR"), duckdb.sqltype("DOUBLE")
    con.create_function("sira_py_lower", _py_lower, [varchar], varchar)
    con.create_function("sira_py_upper", _py_upper, [varchar], varchar)
    con.create_function("sira_py_int", _py_int, [varchar, varchar], varchar)
    con.create_function("sira_py_float", _py_float, [varchar], double)
    con.create_function("sira_py_float_sum", _py_float_sum, [duckdb.sqltype("DOUBLE[]")], double,
                        type="arrow", side_effects=False)
    limb = "STRUCT(j INTEGER, b INTEGER, hi BIGINT, lo UBIGINT)[]"
    bigint = duckdb.sqltype("BIGINT")
    con.create_function("sira_py_float_round", _py_float_round,
                        [duckdb.sqltype(limb), duckdb.sqltype("INTEGER"), bigint, bigint],
                        double, type="arrow", side_effects=False, null_handling="special")


def format_udf(c, t) -> str:
    """The name of a function giving ``t.format(value)`` for values of a tuple or relation type
    (registered on the compiler's connection when first needed)."""
    type_sql = duckdb_type(t)
    name = "sira_py_format_" + hashlib.sha1(type_sql.encode()).hexdigest()[:16]
    con = c.con
    rows = con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = ?",
                       [name]).fetchall()
    if not rows[0][0]:
        con.create_function(name, _formatter(t), [duckdb.sqltype(type_sql)],
                            duckdb.sqltype("VARCHAR"))
    return name


def _formatter(t):
    def fmt(value):
        return t.format(from_duckdb_value(t, value))
    return fmt
