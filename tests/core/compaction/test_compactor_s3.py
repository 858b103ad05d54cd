"""Inputs on S3 are fetched ahead; a missing or corrupt one still fails only its partition."""

from __future__ import annotations

from airflow_provider_fscommit.core.compaction.compactor import compact_units
from airflow_provider_fscommit.core.config.table_spec import TableSpec
from airflow_provider_fscommit.core.publish.publisher import CompactionPublisher
from fscommit_dev.s3_tables import assert_exactly_once, place_on_s3, staged_ids


def test_a_missing_and_a_corrupt_input_on_s3_fail_their_partitions_only(hourly_stream, s3_env):
    bucket = s3_env.create_bucket("prefetch-faults")
    s3 = place_on_s3(hourly_stream, s3_env, bucket, "events")
    staged = staged_ids(s3)
    client = s3_env.client()
    files = {
        hour: [k for k in s3.object_keys(f"staging/dt=2026-11-20/hour={hour}/")]
        for hour in ("00", "01")
    }
    client.delete_object(Bucket=bucket, Key=files["00"][0])
    client.put_object(Bucket=bucket, Key=files["01"][0], Body=b"PAR1 not parquet PAR1")
    publisher = CompactionPublisher(TableSpec.from_options(s3.spec(compaction_file_size="1MB")))
    summary = publisher.run(compact_units)
    outcomes = {o.partition: o for o in summary.outcomes}
    missing = outcomes["dt=2026-11-20/hour=00"]
    assert missing.state == "failed" and "missing on disk" in missing.error
    assert files["00"][0].rsplit("/", 1)[1] in missing.error
    corrupt = outcomes["dt=2026-11-20/hour=01"]
    assert corrupt.state == "failed" and "not a readable Parquet file" in corrupt.error
    assert outcomes["dt=2026-11-20/hour=02"].state == "published"
    assert_exactly_once(s3, staged, {"dt=2026-11-20/hour=02"})
