"""Spark over topics: a PySpark data source that reads and writes topics over the Kafka protocol, and the
job catalog that runs under spark-submit. Nothing here imports Django: this code runs in Spark executors."""
