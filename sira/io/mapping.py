"""The one type mapping between sira and Arrow (and so pandas and Parquet; Spark follows it).

=======================  ==========================================  ===========================
sira type                Arrow type written                          also read as this type
=======================  ==========================================  ===========================
INT                      int32                                       int8, int16, uint8, uint16
LONG                     int64                                       uint32
BIGINT                   decimal128(38, 0)                           decimal of scale 0 (any
                                                                     precision), uint64
FLOAT                    float64                                     float16, float32
STRING                   string                                      large_string, string_view
BOOLEAN                  bool
DATE                     date32                                      date64
TIMESTAMP                timestamp[us] (no time zone)                timestamp[s|ms|ns] (ns only
                                                                     if whole microseconds);
                                                                     with a time zone: the UTC
                                                                     instant (see below)
AVERAGE                  struct<count: int64, value: float64>        count of any integer type
<point>INTERVAL          struct<begin: P not null, end: P>           (P the point's Arrow type;
                                                                     a null end is unbounded)
TUPLE{heading}           struct<one field per attribute>
RELATION{heading}        list<struct<…>> in canonical order          large_list
=======================  ==========================================  ===========================

Dictionary-encoded columns (pandas categoricals) read as their value type. Refused, with a
message saying how to convert: decimals with a scale other than 0 (cast to float64, or round
to scale 0), BIGINT values beyond 38 digits on writing (CSV and JSON hold any size), times of
day, durations, binary, maps and lists of anything but structs.

Time zones: a timestamp with a time zone is an instant; it reads as the UTC wall-clock time of
that instant (``2015-07-30 12:00+02:00`` reads as ``2015-07-30T10:00:00``), and the reader's
report counts such values (``converted_to_utc``). sira writes TIMESTAMP without a time zone.

Each top-level field sira writes carries its sira type as field metadata (``sira.type``, the
type in the text syntax), so Arrow and Parquet files read back exactly. Without it, a struct
whose fields are exactly ``begin, end`` is an interval over the begin field's type (as on
Spark), one whose fields are ``count`` (an integer) and ``value`` (a float) is an AVERAGE, and
any other struct is a tuple.

    >>> from sira.intervals import INTINTERVAL
    >>> str(arrow_type(INTINTERVAL))
    'struct<begin: int32 not null, end: int32>'
    >>> sira_type_of(arrow_type(INTINTERVAL), "x")
    INTINTERVAL
"""

from __future__ import annotations

from ..errors import DataFormatError
from ..intervals import INTERVAL_TYPES, IntervalType
from ..types import (AVERAGE, BIGINT, BOOLEAN, DATE, FLOAT, INT, LONG, STRING, TIMESTAMP,
                     RelationType, TupleType, Type)
from ..values import Heading, type_text
from ._support import require

TYPE_KEY = b"sira.type"
"""Field metadata key holding the sira type (in the text syntax) of a column sira wrote."""

CARDINALITY_KEY = b"sira.cardinality"
"""Schema metadata of a relation of degree 0 (TABLE_DEE: 1, TABLE_DUM: 0): Parquet keeps no
row count for a file without columns."""

ARROW_TYPE_NAMES = {
    INT: "int32", LONG: "int64", BIGINT: "decimal128(38, 0)", FLOAT: "double",
    STRING: "string", BOOLEAN: "bool", DATE: "date32[day]", TIMESTAMP: "timestamp[us]",
}
"""The Arrow type of each scalar type, by name (for engines that build their own types)."""


def _pa():
    return require("pyarrow", "Arrow, Parquet and pandas conversion")


def _scalar_arrow_types(pa) -> dict:
    return {INT: pa.int32(), LONG: pa.int64(), BIGINT: pa.decimal128(38, 0),
            FLOAT: pa.float64(), STRING: pa.string(), BOOLEAN: pa.bool_(), DATE: pa.date32(),
            TIMESTAMP: pa.timestamp("us")}


def arrow_type(t: Type):
    """The Arrow type sira writes for values of type ``t``."""
    pa = _pa()
    scalars = _scalar_arrow_types(pa)
    if t in scalars:
        return scalars[t]
    if t == AVERAGE:
        return pa.struct([pa.field("count", pa.int64(), False),
                          pa.field("value", pa.float64(), False)])
    if isinstance(t, IntervalType):
        point = arrow_type(t.point)
        return pa.struct([pa.field("begin", point, False), pa.field("end", point, True)])
    if isinstance(t, TupleType):
        return struct_type(t.heading)
    if isinstance(t, RelationType):
        return pa.list_(pa.field("item", struct_type(t.heading), False))
    raise DataFormatError(f"no Arrow type for {t.name}", value=t.name)


def struct_type(heading: Heading):
    pa = _pa()
    return pa.struct([pa.field(n, arrow_type(t), False) for n, t in heading.attributes])


def arrow_field(name: str, t: Type):
    """A top-level field: the Arrow type of ``t`` and the sira type as metadata."""
    pa = _pa()
    return pa.field(name, arrow_type(t), False, metadata={TYPE_KEY: type_text(t).encode()})


def arrow_schema(heading: Heading, cardinality: int | None = None):
    pa = _pa()
    metadata = {CARDINALITY_KEY: str(cardinality).encode()} if heading.degree == 0 else None
    return pa.schema([arrow_field(n, t) for n, t in heading.attributes], metadata=metadata)


# --------------------------------------------------------------------------- reading
def sira_type_of(dt, where: str) -> Type:
    """The sira type of Arrow type ``dt`` (the table above, read from right to left).

    Raises:
        DataFormatError: an Arrow type sira does not hold, with a hint on converting it.
    """
    pa = _pa()
    types = pa.types
    if types.is_dictionary(dt):
        return sira_type_of(dt.value_type, where)
    for test, t in ((types.is_boolean, BOOLEAN), (types.is_floating, FLOAT),
                    (types.is_date, DATE), (types.is_timestamp, TIMESTAMP)):
        if test(dt):
            return t
    if types.is_string(dt) or types.is_large_string(dt) or _is_string_view(pa, dt):
        return STRING
    if types.is_integer(dt):
        return _integer_type(dt)
    if types.is_decimal(dt):
        if dt.scale != 0:
            raise DataFormatError(
                f"{where}: {dt} has digits after the decimal point; sira has no decimal type "
                f"(cast it to float64 for a FLOAT, or round it to scale 0 for a BIGINT)",
                value=str(dt), attribute=where)
        return BIGINT
    if types.is_struct(dt):
        return _struct_sira_type(dt, where)
    if types.is_list(dt) or types.is_large_list(dt):
        if not types.is_struct(dt.value_type):
            raise DataFormatError(
                f"{where}: {dt} is a list of {dt.value_type}; sira reads lists of structs as "
                f"relation-valued attributes only (turn each element into a struct)",
                value=str(dt), attribute=where)
        return RelationType(_struct_heading(dt.value_type, where))
    if types.is_null(dt):
        raise DataFormatError(f"{where}: the column holds only nulls, so its type is unknown "
                              f"(pass types= to declare it)", value=str(dt), attribute=where)
    raise DataFormatError(f"{where}: sira has no type for Arrow's {dt} (convert the column to "
                          f"one of int32, int64, float64, string, bool, date32, timestamp[us], "
                          f"a struct or a list of structs)", value=str(dt), attribute=where)


def _is_string_view(pa, dt) -> bool:
    test = getattr(pa.types, "is_string_view", None)
    return bool(test and test(dt))


def _integer_type(dt) -> Type:
    """Signed: up to 32 bits INT, 64 bits LONG; unsigned: up to 16 bits INT, 32 bits LONG,
    64 bits BIGINT (the type that holds every value)."""
    if _pa().types.is_signed_integer(dt):
        return INT if dt.bit_width <= 32 else LONG
    return INT if dt.bit_width <= 16 else LONG if dt.bit_width == 32 else BIGINT


def _struct_sira_type(dt, where: str) -> Type:
    pa = _pa()
    names = [dt.field(i).name for i in range(dt.num_fields)]
    if [n.lower() for n in names] == ["begin", "end"]:
        point = sira_type_of(dt.field(0).type, f"{where}.begin")
        for interval_type in INTERVAL_TYPES.values():
            if interval_type.point == point:
                return interval_type
        raise DataFormatError(f"{where}: an interval over {point.name} (points must be INT, "
                              f"LONG, DATE, TIMESTAMP or FLOAT)", value=str(dt), attribute=where)
    if [n.lower() for n in names] == ["count", "value"] \
            and pa.types.is_integer(dt.field(0).type) and pa.types.is_floating(dt.field(1).type):
        return AVERAGE
    return TupleType(_struct_heading(dt, where))


def _struct_heading(dt, where: str) -> Heading:
    from ._support import attribute_names
    fields = [dt.field(i) for i in range(dt.num_fields)]
    names = attribute_names([f.name for f in fields], where)
    return Heading.of([(n, sira_type_of(f.type, f"{where}.{n}")) for n, f in zip(names, fields)])


__all__ = ["ARROW_TYPE_NAMES", "CARDINALITY_KEY", "TYPE_KEY", "arrow_field", "arrow_schema",
           "arrow_type", "sira_type_of", "struct_type"]
