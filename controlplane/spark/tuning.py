"""Spark settings for sessions that read topics, set where the session's JVMs start (job runs: the launcher).

Arrow Java's per-read checks. A Python data source hands Spark Arrow batches, and the JVM turns every row of
every column into an UnsafeRow through Arrow Java's vector accessors. Each of those reads checks the buffer's
bounds and reference count first (ArrowBuf.checkIndexD, ensureAccessible): in a JFR profile of a full-schema
read that was a quarter of the row projection's samples. Arrow Java drops those checks when
`arrow.enable_unsafe_memory_access` is true; Spark's accessors check nulls and row counts themselves before
each read. A Java system property must be on the JVM's command line: spark.driver.extraJavaOptions and
spark.executor.extraJavaOptions.

Measured A/B with bench/spark_read.py (interleaved runs, same code): the JVM's CPU on a full-schema read of
5 M records was 11% lower (median of 4 pairs, load 10-16) and unchanged within noise (3 pairs, load 1.5-4). A
Spark Connect server is started by its operator: give it the same confs (README).
"""

from __future__ import annotations

# Arrow Java: no bounds and reference-count checks on every buffer read.
ARROW_JAVA_OPTIONS = ("-Darrow.enable_unsafe_memory_access=true",)
JAVA_OPTIONS_CONFS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")


def topic_read_confs() -> dict[str, str]:
    """The confs job runs start their driver and executors with (the JVM reader's jar comes with the launcher's
    shipment, `--jars`: jvm.py)."""
    return dict.fromkeys(JAVA_OPTIONS_CONFS, " ".join(ARROW_JAVA_OPTIONS))
