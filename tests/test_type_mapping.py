"""One type mapping: the Arrow types sira's I/O writes (``sira.io.mapping``) are the Arrow types
of the Spark types the Spark engine uses (``sira_spark.types``), so a Parquet file written by
one reads in the other. The one documented difference: an AVERAGE's count is 32-bit on Spark
(``struct<count: int, value: double>``) and 64-bit in files."""

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import pyarrow as pa  # noqa: E402
from pyspark.sql.pandas.types import to_arrow_type  # noqa: E402

from sira import (AVERAGE, BIGINT, BOOLEAN, DATE, DATEINTERVAL, FLOAT, FLOATINTERVAL,  # noqa: E402
                  INT, INTINTERVAL, LONG, LONGINTERVAL, STRING, TIMESTAMP, TIMESTAMPINTERVAL,
                  Heading)
from sira.io.mapping import arrow_type  # noqa: E402
from sira.types import RelationType, TupleType  # noqa: E402
from sira_spark.types import spark_type  # noqa: E402

TYPES = [INT, LONG, BIGINT, FLOAT, STRING, BOOLEAN, DATE, TIMESTAMP, INTINTERVAL, LONGINTERVAL,
         DATEINTERVAL, TIMESTAMPINTERVAL, FLOATINTERVAL,
         TupleType(Heading.of({"a": INT, "d": DATEINTERVAL})),
         RelationType(Heading.of({"a": INT, "s": STRING, "t": TIMESTAMPINTERVAL})),
         RelationType(Heading.of({"r": RelationType(Heading.of({"x": LONG}))}))]


def _plain(dt):
    """``dt`` with list fields named alike (Arrow names a list's field ``item`` or ``element``
    as the writer likes; the name carries no meaning)."""
    if pa.types.is_list(dt):
        return pa.list_(pa.field("item", _plain(dt.value_type), dt.value_field.nullable))
    if pa.types.is_struct(dt):
        return pa.struct([pa.field(f.name, _plain(f.type), f.nullable) for f in dt])
    return dt


@pytest.mark.parametrize("t", TYPES, ids=str)
def test_files_and_spark_hold_a_sira_type_as_the_same_arrow_type(t):
    assert _plain(to_arrow_type(spark_type(t))) == _plain(arrow_type(t))


def test_an_average_differs_only_in_the_width_of_its_count():
    on_spark, in_files = to_arrow_type(spark_type(AVERAGE)), arrow_type(AVERAGE)
    assert on_spark.field("count").type == pa.int32()
    assert in_files.field("count").type == pa.int64()
    assert on_spark.field("value") == in_files.field("value")
