"""Spark's footer metadata: the schema Spark writes into each file's footer, and merging it.

Spark's file sink writes its own schema, as JSON under :data:`SPARK_SCHEMA_KEY`, into the
key-value metadata of every file's footer. That schema, not the file format's, says what
a column *is* (an INT96 column is Spark's ``timestamp``, an INT64 one may be
``timestamp_ntz``): Spark's reader trusts it, so a compacted file must carry it, and the
iceberg policy maps its types. Files of one partition may
disagree (a nullable column added mid-stream), so the compactor merges it field by field.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

import pyarrow as pa

SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"


def merged_footer_metadata(
    schemas: Sequence[pa.Schema], merged: pa.Schema, partial: Collection[str]
) -> dict[bytes, bytes]:
    """The inputs' footer metadata, with Spark's schema JSON merged field by field.

    ``merged`` is the inputs' unified schema, whose column order the merged JSON follows;
    ``partial`` names the columns some inputs lack, nullable in the merged JSON. Should an
    input have no Spark schema, the result has none either.
    """
    metadata: dict[bytes, bytes] = {}
    for schema in schemas:
        metadata.update(schema.metadata or {})
    spark_fields: dict[str, dict] = {}
    for schema in schemas:
        raw = (schema.metadata or {}).get(SPARK_SCHEMA_KEY)
        if raw is None:
            metadata.pop(SPARK_SCHEMA_KEY, None)
            return metadata
        for spark_field in json.loads(raw)["fields"]:
            spark_fields.setdefault(spark_field["name"], spark_field)
    for name in partial:
        spark_fields[name] = spark_fields[name] | {"nullable": True}
    if SPARK_SCHEMA_KEY in metadata:
        metadata[SPARK_SCHEMA_KEY] = json.dumps(
            {"type": "struct", "fields": [spark_fields[name] for name in merged.names]},
            separators=(",", ":"),
        ).encode()
    return metadata
