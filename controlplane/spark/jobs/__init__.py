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
