"""Settings for the Spark JVMs (driver and executors) that take in the topic source's Arrow batches.

A Python data source hands Spark Arrow batches, and the JVM turns every row of every column into an UnsafeRow
through Arrow Java's vector accessors. Each of those reads checks the buffer's bounds and reference count first
(ArrowBuf.checkIndexD, ensureAccessible): in a JFR profile of a full-schema read that was a quarter of the
projection's samples. Arrow Java drops those checks when `arrow.enable_unsafe_memory_access` is true; Spark's
accessors check nulls and row counts themselves before each read. bench/spark_read.py: the JVM's CPU on a
full-schema read of 5 M records fell by about a tenth (README).

Java system properties must be on the JVM's command line, so they are spark-submit confs
(spark.driver.extraJavaOptions / spark.executor.extraJavaOptions). A Spark Connect server is started by its
operator: give it the same confs (README).
"""

from __future__ import annotations

# Arrow Java: no bounds and reference-count checks on every buffer read.
ARROW_JAVA_OPTIONS = ("-Darrow.enable_unsafe_memory_access=true",)
JAVA_OPTIONS_CONFS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")


def java_options_confs() -> dict[str, str]:
    """The confs that put ARROW_JAVA_OPTIONS on the driver's and the executors' JVMs."""
    options = " ".join(ARROW_JAVA_OPTIONS)
    return dict.fromkeys(JAVA_OPTIONS_CONFS, options)
