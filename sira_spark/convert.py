"""Relations to DataFrames and back, and the admission of data that did not come from sira.

    >>> from sira import INT, Relation
    >>> r = Relation.from_rows({"a": INT}, [(1,), (2,)])
    >>> from sira_spark.session import default_engine
    >>> e = default_engine()
    >>> to_relation(to_dataframe(e.spark, r), r.heading) == r
    True

A DataFrame, table or Parquet relvar gets its sira heading from its schema (``sira_type_of``):

=======================================  ==============================================
Spark column type                        sira type
=======================================  ==============================================
int, smallint, tinyint                   INT
bigint                                   LONG
decimal(p,0)                             BIGINT (held as decimal(38,0))
double, float                            FLOAT
string                                   STRING
boolean                                  BOOLEAN
date                                     DATE
timestamp_ntz                            TIMESTAMP
timestamp (an instant, "with local       TIMESTAMP: the instant's UTC date and time (the
time zone")                              engine's session time zone is UTC)
struct<begin:P, end:P>                   the interval type over P's sira type; a null
                                         ``end`` means unbounded above, as inside sira
struct<count:int, value:double>          AVERAGE
any other struct                         a tuple-valued attribute (field names
                                         case-insensitive, any order)
array<struct<...>>                       a relation-valued attribute (duplicates
                                         collapse, order does not matter)
=======================================  ==============================================

Refused, with a message saying how to convert: decimal(p,s) with s > 0 (cast to double for
an inexact FLOAT, or scale to whole units and cast to decimal(38,0)), arrays of scalars
(explode them into rows, or make each element a struct for a relation-valued attribute),
maps, binary and interval types.

Data admitted this way (``admit``) holds no NULL and no NaN (sira has none): a relvar holding
one is refused with ``NullValue`` naming the relvar, the attribute, how many rows and whether it
is NULL or NaN, before the query runs, unless the caller's policy is ``nulls="drop"`` (rows
holding any NULL or NaN, at any depth, are left out). A query reading an interval whose end is
before its begin fails with ``DataFormatError`` (the readers' class) naming the relvar and the
attribute (one whose end equals its begin is the empty interval, which only IINTERSECT makes;
``sira.io`` reads it so too). Columns are then cast to sira's own Spark types, structs rebuilt
in the heading's order and relation-valued attributes put in their canonical order (sorted,
distinct), a FLOAT's -0.0 read as 0.0.
"""

from __future__ import annotations

import decimal

from sira.errors import IntOverflow
from sira.intervals import Interval, IntervalType, empty_interval
from sira.types import AVERAGE, BIGINT, FLOAT, Average, RelationType, TupleType, holds_float
from sira.values import Relation, Tuple

from .rowbound import remember_rows
from .types import schema_of, spark_type


def _to_spark_value(t, v):
    if t == BIGINT:
        return decimal.Decimal(v)
    if t == AVERAGE:
        return (v.count, v.value)
    if isinstance(t, IntervalType):
        if v.empty:
            v = empty_interval(t)  # the one struct every empty interval is held as
        return (v.begin, v.end)
    if isinstance(t, TupleType):
        return to_row(t.heading, v.values)
    if isinstance(t, RelationType):
        return [to_row(t.heading, row) for row in v.sorted_body()]
    return v


def _simple(t) -> bool:
    return not (t == BIGINT or t == AVERAGE or isinstance(t, (IntervalType, TupleType,
                                                             RelationType)))


def to_row(heading, values) -> tuple:
    """A body tuple as a Spark row value (a Python tuple in schema order)."""
    return tuple(v if _simple(t) else _to_spark_value(t, v)
                 for t, v in zip(heading.types, values))


def to_dataframe(spark, relation: Relation):
    """A DataFrame holding the relation (one column per attribute)."""
    h = relation.heading
    schema = schema_of(h)
    if all(_simple(t) for t in h.types):
        rows = list(relation.body)
    else:
        rows = [to_row(h, row) for row in relation.body]
    if h.degree == 0:
        # Spark has no zero-column DataFrames: a dummy column that to_relation drops
        df = spark.range(len(relation.body)).select()
        return df
    df = local_dataframe(spark, rows, schema, verify=False)  # typed by the heading
    remember_rows(df, len(rows))
    return df


def local_dataframe(spark, rows, schema, verify: bool = True):
    """A DataFrame of ``rows`` (tuples in the order of ``schema``, a StructType or a DDL
    string), made from driver-side data as ``spark.createDataFrame`` makes it, without the
    Python worker each read of that DataFrame would start. Each row is checked against the
    schema first, as ``createDataFrame`` checks it (a TypeError naming the field), unless
    ``verify`` is False: the JVM would read a value of another type (an int in a DOUBLE
    column) as NULL, without an error.

        >>> from sira_spark.session import default_engine
        >>> spark = default_engine().spark
        >>> sorted(local_dataframe(spark, [(2, "b"), (1, "a")], "n long, s string").collect())
        [Row(n=1, s='a'), Row(n=2, s='b')]

    ``createDataFrame`` hands the JVM the rows pickled in batches, then adds a Python step
    that pickles them again in the batch form the JVM's unpickler was once written for
    (``RDD._pickled``); that step runs in a Python worker at every read, about 60 ms per read
    of a small relation on local[2], and a query reads its inputs many times. The unpickler
    reads either form (``SerDeUtil.pythonToJava(rdd, batched=True)``), so the batches go to it
    as they are. The plan is the same (a scan of the driver's rows). A session without the
    classic JVM gateway (Spark Connect) gets ``createDataFrame``.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType, _make_type_verifier, _parse_datatype_string
    try:
        sc = spark.sparkContext
        jvm, jsession = sc._jvm, spark._jsparkSession
    except Exception:  # noqa: BLE001 - Spark Connect: no gateway to the JVM
        return spark.createDataFrame(rows, schema=schema, verifySchema=verify)
    if not isinstance(schema, StructType):
        schema = _parse_datatype_string(schema)
    if verify:
        check = _make_type_verifier(schema)
        for row in rows:
            check(row)
    internal = [schema.toInternal(row) for row in rows]
    pickled = sc.parallelize(internal)._jrdd  # the rows' pickled batches, in the JVM
    objects = jvm.SerDeUtil.toJavaArray(jvm.SerDeUtil.pythonToJava(pickled, True))
    return DataFrame(jsession.applySchemaToPythonRDD(objects.rdd(), schema.json()), spark)


def _from_spark_value(t, v):
    if t == BIGINT:
        return int(v)
    if t == AVERAGE:
        return Average(v[0], v[1])
    if isinstance(t, IntervalType):
        return Interval(v[0], v[1])
    if isinstance(t, TupleType):
        return Tuple(t.heading, from_row(t.heading, v))
    if isinstance(t, RelationType):
        return Relation(t.heading, frozenset(from_row(t.heading, r) for r in v))
    return v


def from_row(heading, row) -> tuple:
    return tuple(v if _simple(t) else _from_spark_value(t, v)
                 for t, v in zip(heading.types, row))


def sira_type_of(dt, column: str = "?", relvar: str | None = None):
    """The sira type of a Spark column type (for relvars given as DataFrames); ``column`` and
    ``relvar`` name the column in the error raised for a type sira has no equivalent for.

    Raises:
        SiraTypeError: the type has no sira equivalent (the message says how to convert it).
    """
    from pyspark.sql import types as T

    from sira.intervals import INTERVAL_TYPES
    from sira.types import BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP
    from sira.values import Heading
    simple = {T.IntegerType: INT, T.LongType: LONG, T.DoubleType: FLOAT, T.StringType: STRING,
              T.BooleanType: BOOLEAN, T.DateType: DATE, T.TimestampNTZType: TIMESTAMP,
              T.TimestampType: TIMESTAMP, T.ShortType: INT, T.ByteType: INT, T.FloatType: FLOAT}
    for cls, t in simple.items():
        if isinstance(dt, cls):
            return t
    if isinstance(dt, T.DecimalType) and dt.scale == 0:
        return BIGINT
    if isinstance(dt, T.StructType):
        names = [f.name.lower() for f in dt.fields]
        if names == ["begin", "end"]:
            point = sira_type_of(dt.fields[0].dataType, f"{column}.begin", relvar)
            if sira_type_of(dt.fields[1].dataType, f"{column}.end", relvar) == point:
                for it in INTERVAL_TYPES.values():
                    if it.point == point:
                        return it
        if names == ["count", "value"]:
            return AVERAGE
        return TupleType(Heading.of([(f.name, sira_type_of(f.dataType, f"{column}.{f.name}",
                                                           relvar)) for f in dt.fields]))
    if isinstance(dt, T.ArrayType) and isinstance(dt.elementType, T.StructType):
        return RelationType(Heading.of([(f.name, sira_type_of(f.dataType, f"{column}.{f.name}",
                                                              relvar))
                                        for f in dt.elementType.fields]))
    raise _unmapped(dt, column, relvar)


def _unmapped(dt, column: str, relvar: str | None):
    """The error for a Spark type sira has no equivalent for, saying how to convert it (with
    code for a top-level column)."""
    from pyspark.sql import types as T

    from sira.errors import SiraTypeError
    top = "." not in column
    c = f"'{column}'"
    if isinstance(dt, T.DecimalType):
        how = ("cast it to double for an (inexact) FLOAT"
               + (f" (df.withColumn({c}, F.col({c}).cast('double')))" if top else "")
               + ", or scale it to whole units and cast it to decimal(38,0) for an exact BIGINT")
    elif isinstance(dt, T.ArrayType):
        how = ("sira has no list type: explode it into rows"
               + (f" (F.explode({c}))" if top else "")
               + ", or make each element a struct for a relation-valued attribute"
               + (f" (F.transform({c}, lambda x: F.struct(x.alias('value'))))" if top else "")
               + "; duplicates then collapse and the order is lost")
    elif isinstance(dt, T.MapType):
        how = "explode it into key/value rows" + (f" (F.explode({c}))" if top else "")
    else:
        how = ("cast it to a type sira maps (int, bigint, decimal(38,0), double, string, "
               "boolean, date, timestamp)")
    where = f"relvar '{relvar}': " if relvar else ""
    return SiraTypeError(f"{where}column {c} is {dt.simpleString()}, which sira has no type "
                         f"for: {how}", operator="RELVAR", expected="a Spark type sira maps",
                         got=dt.simpleString())


def heading_of_dataframe(df, relvar: str | None = None):
    """The sira heading of a DataFrame's schema (names case-insensitive), each column name
    checked as sira's readers check it (:func:`sira.io._support.attribute_names`: a name the
    text syntax can use, once), so a DataFrame Spark reads gives the Python engine's error."""
    from sira.io._support import attribute_names, column_type_held
    from sira.values import Heading
    where = relvar or "<DataFrame>"
    attribute_names([f.name for f in df.schema.fields], where)
    pairs = []
    for f in df.schema.fields:
        with column_type_held(where, f.name):
            pairs.append((f.name, sira_type_of(f.dataType, f.name, relvar)))
    return Heading.of(pairs)


# --------------------------------------------------------------------------- admission

NULL_POLICIES = ("error", "drop")


def null_policy(value) -> str:
    """The ``nulls`` option checked: ``"error"`` (refuse NULL and NaN) or ``"drop"``."""
    from sira.errors import SiraValueError
    if value not in NULL_POLICIES:
        raise SiraValueError(f"nulls must be 'error' or 'drop' (got {value!r})",
                             operator="nulls", value=value)
    return value


def admit(df, heading, relvar: str, policy: str = "error"):
    """A DataFrame that did not come from sira, as sira may read it (see the module docstring).

    With ``"error"``, one Spark job (an aggregation computing every column's NULL and NaN counts
    together), and none when the schema says no column can hold a NULL and there is no FLOAT
    column; with ``"drop"``, a filter and no job. An interval whose end is before its begin
    costs no job either: the plan fails with DataFormatError when Spark reads that row.

    ``"trust"`` (the caller's promise that there is none) looks for no NULL and no NaN.

    Raises:
        NullValue: a NULL or NaN, when the policy is ``"error"``.
    """
    faults = fault_conditions(df, heading)
    nulls = [f for f in faults if f[1] != "INVERTED"]
    if nulls and policy == "drop":
        df = df.where(~_any([cond for _, _, cond in nulls]))
    elif nulls and policy == "error":
        _refuse_nulls(df, nulls, relvar)
    df = _fail_on_inverted_intervals(df, [f for f in faults if f[1] == "INVERTED"], relvar)
    return as_read(df, heading)


def as_read(df, heading, keep=()):
    """The heading's columns in sira's own Spark form, as ``admit`` reads them once their
    faults are dealt with (:func:`canonical_columns`, then every empty interval held as one
    struct); the columns named in ``keep`` follow as they are."""
    return _one_empty_interval(canonical_columns(df, heading, keep), heading, keep)


def _one_empty_interval(df, heading, keep=()):
    """The DataFrame with every empty interval (end equal to begin) of an interval column
    held as the one canonical struct (``sira.intervals.empty_interval``), so that grouping
    and joins see one value, as the Python engine does."""
    from pyspark.sql import functions as F

    from .functions import is_empty_interval, literal_column
    intervals = [n for n, t in heading.attributes if isinstance(t, IntervalType)]
    if not intervals:
        return df
    return df.select(*[
        F.when(is_empty_interval(F.col(f"`{n}`")), literal_column(t, empty_interval(t)))
        .otherwise(F.col(f"`{n}`")).alias(n) if isinstance(t, IntervalType) else F.col(f"`{n}`")
        for n, t in heading.attributes], *[F.col(f"`{k}`") for k in keep])


def _any(conditions):
    out = conditions[0]
    for c in conditions[1:]:
        out = out | c
    return out


def _refuse_nulls(df, faults, relvar):
    """Count every NULL and NaN fault in one pass; raise for the first found (heading order)."""
    from pyspark.sql import functions as F

    from sira.errors import NullValue
    row = df.agg(*[F.count_if(cond).alias(f"f{i}") for i, (_, _, cond) in enumerate(faults)]) \
        .first()
    for i, (name, kind, _) in enumerate(faults):
        if row[i]:
            raise NullValue(relvar=relvar, attribute=name, count=row[i], value=kind)


def _fail_on_inverted_intervals(df, faults, relvar):
    """The rows, with the plan failing with DataFormatError (the readers' class) at an interval
    whose end is before its begin (checked as Spark reads each row: no job of its own)."""
    from pyspark.sql import functions as F

    from .functions import sira_error
    if not faults:
        return df
    check = F
    for name, _, cond in faults:
        check = check.when(cond, sira_error(
            "DataFormatError", f"relvar '{relvar}': attribute '{name}' holds an interval whose "
            f"end is before its begin"))
    return df.where(check.otherwise(F.lit(True)))


def fault_conditions(df, heading) -> list:
    """``(attribute, kind, condition)`` for every way a row's value of an attribute can be
    faulty: kind ``"NULL"`` (a null anywhere inside, except an interval's end, which means
    unbounded), ``"NaN"`` (a NaN in a FLOAT anywhere inside) or ``"INVERTED"`` (an interval
    whose end is before its begin). Columns whose schema says they cannot hold nulls get no NULL
    condition (Spark trusts the schema too)."""
    from pyspark.sql import functions as F
    fields = {f.name.lower(): f for f in df.schema.fields}
    out = []
    for name, t in heading.attributes:
        f = fields[name]
        for kind, cond in _faults(F.col(f"`{f.name}`"), t, f.dataType, f.nullable).items():
            out.append((name, kind, cond))
    return out


def _field_types(t, dt):
    """``(spark field, sira type, may be null)`` for each field of a struct column."""
    from sira.types import FLOAT, INT
    for f in dt.fields:
        key = f.name.lower()
        if isinstance(t, IntervalType):
            yield f, t.point, f.nullable and key != "end"  # a null end: unbounded above
        elif t == AVERAGE:
            yield f, (INT if key == "count" else FLOAT), f.nullable
        else:
            yield f, t.heading.type_of(key), f.nullable


def _faults(c, t, dt, nullable: bool) -> dict:
    """kind -> condition for one value ``c`` of sira type ``t`` and Spark type ``dt``."""
    from pyspark.sql import functions as F

    from sira.types import FLOAT
    found: dict = {}

    def add(kind, cond):
        found[kind] = found[kind] | cond if kind in found else cond
    if nullable:
        add("NULL", c.isNull())
    if t == FLOAT:
        add("NaN", F.isnan(c))
    elif isinstance(t, (IntervalType, TupleType)) or t == AVERAGE:
        for f, ft, may_be_null in _field_types(t, dt):
            for kind, cond in _faults(c[f.name], ft, f.dataType, may_be_null).items():
                add(kind, cond)
        if isinstance(t, IntervalType):
            add("INVERTED", c["end"].isNotNull() & (c["end"] < c["begin"]))
    elif isinstance(t, RelationType):
        element = TupleType(t.heading)
        for kind in _faults(F.col("x"), element, dt.elementType, dt.containsNull):
            add(kind, F.exists(c, _element_fault(kind, element, dt)))
    return found


def _element_fault(kind, element, dt):
    """The one-argument predicate ``F.exists`` wants: does an RVA element have ``kind``?"""
    return lambda e: _faults(e, element, dt.elementType, dt.containsNull)[kind]


def canonical_columns(df, heading, keep=()):
    """The DataFrame with sira's own Spark types: casts where the schema differs (a
    ``timestamp`` instant becomes its UTC ``timestamp_ntz``, a ``float`` a double...), structs
    in the heading's order with its names, relation-valued attributes sorted and distinct, a
    FLOAT's -0.0 as 0.0 at any depth (sira's FLOAT has one zero, as the readers read it); the
    columns named in ``keep`` follow as they are. Returns ``df`` itself when nothing needs
    changing."""
    from pyspark.sql import functions as F
    fields = {f.name.lower(): f for f in df.schema.fields}
    columns, changed = [], False
    for name, t in heading.attributes:
        f = fields[name]
        c = F.col(f"`{f.name}`")
        if _needs_rebuilding(t, f.dataType) or f.name != name:
            c, changed = _canonical(c, t, f.dataType).alias(name), True
        columns.append(c)
    return df.select(*columns, *[F.col(f"`{k}`") for k in keep]) if changed else df


def _needs_rebuilding(t, dt) -> bool:
    from pyspark.sql import types as T
    if isinstance(dt, T.ArrayType):
        return True  # an RVA from outside: its order and distinctness are unknown
    return dt.simpleString() != spark_type(t).simpleString() or holds_float(t)


def _canonical(c, t, dt):
    from pyspark.sql import functions as F
    if isinstance(t, RelationType):
        element = TupleType(t.heading)
        return F.array_sort(F.array_distinct(F.transform(
            c, lambda e: _canonical(e, element, dt.elementType))))
    if isinstance(t, (IntervalType, TupleType)) or t == AVERAGE:
        by_name = {f.name.lower(): (f, ft) for f, ft, _ in _field_types(t, dt)}
        return F.struct(*[_canonical(c[by_name[n][0].name], by_name[n][1],
                                     by_name[n][0].dataType).alias(n)
                          for n in _struct_names(t)])
    target = spark_type(t)
    if t == FLOAT:  # -0.0 is 0.0
        return c.cast(target) + F.lit(0.0)
    if dt.simpleString() == target.simpleString():
        return c
    if dt.simpleString() == "timestamp":
        return utc_date_time(c)
    return c.cast(target)


def utc_date_time(instant):
    """The UTC date and time (``timestamp_ntz``) of a ``timestamp`` column (an instant), exactly
    and whatever the session's time zone: the epoch plus the instant's microseconds since it."""
    from pyspark.sql import functions as F
    epoch = F.expr("TIMESTAMP_NTZ'1970-01-01 00:00:00'")
    return F.timestamp_add("MICROSECOND", F.unix_micros(instant), epoch)


def _struct_names(t) -> list:
    if isinstance(t, IntervalType):
        return ["begin", "end"]
    if t == AVERAGE:
        return ["count", "value"]
    return list(t.heading.names)


def in_order(df, names):
    """``df`` with exactly the columns ``names``, in that order: ``df`` itself when it has them.

        >>> from sira_spark import default_engine
        >>> df = default_engine().spark.range(1).selectExpr("id AS a", "id AS b")
        >>> in_order(df, ["a", "b"]) is df, in_order(df, ["b", "a"]).columns
        (True, ['b', 'a'])
    """
    names = list(names)
    if df.columns == names:
        return df
    return df.select(*[f"`{n}`" for n in names])


def to_relation(df, heading) -> Relation:
    """Collect a DataFrame into a relation of ``heading`` (duplicates collapse)."""
    if heading.degree == 0:
        return Relation(heading, frozenset({()}) if df.limit(1).count() else frozenset())
    try:
        rows = in_order(df, heading.names).collect()
    except (OverflowError, ValueError) as err:  # Spark's TIMESTAMP reaches past year 9999
        if "out of range" not in str(err):
            raise
        raise IntOverflow(type="TIMESTAMP", value=f"a value after year 9999 ({err})") from None
    if all(_simple(t) for t in heading.types):
        return Relation(heading, frozenset(tuple(r) for r in rows))
    return Relation(heading, frozenset(from_row(heading, r) for r in rows))
