"""Spark settings for sessions that read topics, set where the session's JVMs start (job runs: the launcher).

Arrow Java's per-read checks. A Python data source hands Spark Arrow batches, and the JVM turns every row of
every column into an UnsafeRow through Arrow Java's vector accessors. Each of those reads checks the buffer's
bounds and reference count first (ArrowBuf.checkIndexD, ensureAccessible): in a JFR profile of a full-schema
read that was a quarter of the row projection's samples. Arrow Java drops those checks when
`arrow.enable_unsafe_memory_access` is true; Spark's accessors check nulls and row counts themselves before
each read. A Java system property must be on the JVM's command line: spark.driver.extraJavaOptions and
spark.executor.extraJavaOptions.

The JVM-Python stream buffers. Each task's JVM thread and Python worker exchange the batches through buffered
streams of `spark.buffer.size` bytes (64 KiB by default, on both sides): an 8 MiB batch took about 130 reads
by the JVM, each a wake-up of one process by the other, and on a loaded host each wake-up waits for a CPU.

bench/spark_read.py measures both (README). A Spark Connect server is started by its operator: give it the same
confs (README).
"""

from __future__ import annotations

# Arrow Java: no bounds and reference-count checks on every buffer read.
ARROW_JAVA_OPTIONS = ("-Darrow.enable_unsafe_memory_access=true",)
JAVA_OPTIONS_CONFS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")
# One fetch-sized batch in a few reads; two such buffers per running task (JVM and Python side).
PYTHON_STREAM_BUFFER_BYTES = 4 * 1024 * 1024


def topic_read_confs() -> dict[str, str]:
    """The confs job runs start their driver and executors with."""
    return {
        **dict.fromkeys(JAVA_OPTIONS_CONFS, " ".join(ARROW_JAVA_OPTIONS)),
        "spark.buffer.size": str(PYTHON_STREAM_BUFFER_BYTES),
    }
