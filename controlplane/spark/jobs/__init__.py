"""The job catalog: each module has a `Parameters` dataclass and `run(spark, parameters, context) -> Result`,
and runs on its own under spark-submit through controlplane/spark/submit.py."""

CATALOG = (
    "export_parquet",
    "key_skew",
    "windowed_aggregation",
    "json_schema_inference",
    "topic_copy",
    "data_quality",
    "backlog_profile",
)

# Long-running Structured Streaming jobs: `Parameters` and `start(spark, parameters, context) -> StreamingQuery`
# (context: streaming.StreamContext); the control plane supervises them (controlplane.jobs streams).
STREAMING_CATALOG = (
    "stream_topic_sql",
    "stream_to_parquet",
)
