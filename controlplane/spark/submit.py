"""spark-submit entry point for every catalog job.

    STREAMHUB_KAFKA_CONFIG_FILE=conn.json spark-submit controlplane/spark/submit.py \
        --job key_skew --parameters '{"source": {"topic": "orders"}, "top": 10}' --output-dir out/

The repository root must be importable by the driver and the Python workers (PYTHONPATH, or --py-files with a
zip of controlplane/ on a real cluster).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

from controlplane.spark.jobs import CATALOG
from controlplane.spark.jobs.runtime import (
    DRIVER_FILE,
    JobContext,
    load_kafka_config,
    parameters_from_json,
    write_result,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--job", required=True, choices=CATALOG)
    parser.add_argument("--parameters", default="{}", help="JSON object of the job's parameters")
    parser.add_argument("--output-dir", required=True, type=Path)
    arguments = parser.parse_args(argv)
    module = importlib.import_module(f"controlplane.spark.jobs.{arguments.job}")
    parameters = parameters_from_json(module.Parameters, json.loads(arguments.parameters))
    arguments.output_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    from pyspark.sql import SparkSession

    from controlplane.spark.topic_source import register_topic_source

    spark = SparkSession.builder.appName(f"streamhub-{arguments.job}").getOrCreate()
    register_topic_source(spark)
    # The launcher polls the driver UI's REST API for progress; the port is picked freely, so tell it where.
    (arguments.output_dir / DRIVER_FILE).write_text(
        json.dumps({"ui": spark.sparkContext.uiWebUrl, "application_id": spark.sparkContext.applicationId})
    )
    try:
        context = JobContext(kafka_config=load_kafka_config(), output_dir=arguments.output_dir)
        result = module.run(spark, parameters, context)
        write_result(arguments.output_dir, result, started)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
