"""The JVM reader of the `topics` source: a jar compiled from `jvm/src` with `javac`, against PySpark's own jars.

A Python data source hands Spark Arrow batches that the JVM then turns into rows, and that hand-over alone
costs more than reading Parquet (bench/spark_read.py). The JVM reader (jvm/src/streamhub/spark) fetches and
decodes records straight into Spark's column vectors; planning stays in Python (jvm_planning.py). With the jar on
the classpath (`spark.jars`, see tuning.topic_read_confs) `spark.read.format("topics")` reads with it; without a
JDK the jar is not built and the Python source reads as before.

The jar is built once per source version and PySpark version, where Spark runs (scripts/bootstrap.sh, so
`make run`; the job launcher's artifacts, artifact.build_jvm_reader; the bench), into a cache directory;
concurrent builders each write a temporary file and rename it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

SOURCE_ROOT = Path(__file__).resolve().parent / "jvm"
# The oldest JDK Spark 4 runs on: the jar loads on any JVM Spark does.
JAVA_RELEASE = "17"
# A fixed time for every jar entry: the same sources always make the same bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
COMPILE_TIMEOUT_S = 300


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def _javac() -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "javac").is_file():
        return str(Path(java_home) / "bin" / "javac")
    return shutil.which("javac")


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "controlplane-spark"


def _inputs() -> list[tuple[str, bytes]]:
    """(path under jvm/, content) of every source and resource, in a stable order."""
    return [
        (path.relative_to(SOURCE_ROOT).as_posix(), path.read_bytes())
        for path in sorted(SOURCE_ROOT.rglob("*"))
        if path.is_file() and (path.suffix == ".java" or path.is_relative_to(SOURCE_ROOT / "resources"))
    ]


def jar_name() -> str:
    """The jar's name: a digest of its sources and of the PySpark version it is compiled against."""
    import pyspark

    hasher = hashlib.sha256(f"pyspark {pyspark.__version__} release {JAVA_RELEASE}\n".encode())
    for name, content in _inputs():
        hasher.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    return f"streamhub-topics-jvm-{hasher.hexdigest()[:12]}.jar"


def build_reader_jar(directory: Path | None = None) -> Path:
    """The reader's jar in `directory` (the cache directory by default), compiled into the cache directory unless
    it is there already (scripts/bootstrap.sh builds it there), then copied. Raises JvmBuildError when there is
    no javac or the sources do not compile."""
    cached = _cache_dir() / jar_name()
    if not cached.exists():
        _compile(cached)
    if directory is None:
        return cached
    target = directory / cached.name
    if not target.exists():
        _atomically(target, lambda partial: shutil.copyfile(cached, partial))
    return target


def _compile(target: Path) -> None:
    javac = _javac()
    if javac is None:
        raise JvmBuildError("no javac found (set JAVA_HOME to a JDK 17 or later)")
    with tempfile.TemporaryDirectory(prefix="topics-jvm-") as work:
        classes = Path(work) / "classes"
        sources = sorted(str(p) for p in (SOURCE_ROOT / "src").rglob("*.java"))
        command = [javac, "--release", JAVA_RELEASE, "-nowarn", "-encoding", "UTF-8"]
        command += ["-cp", str(_pyspark_jars() / "*"), "-d", str(classes), *sources]
        try:
            subprocess.run(command, check=True, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except subprocess.CalledProcessError as error:
            raise JvmBuildError(f"javac failed: {error.stderr.strip()[-2000:]}") from None
        except subprocess.TimeoutExpired:
            raise JvmBuildError(f"javac took longer than {COMPILE_TIMEOUT_S} s") from None
        entries = [(p.relative_to(classes).as_posix(), p) for p in classes.rglob("*.class")]
        resources = SOURCE_ROOT / "resources"
        entries += [(p.relative_to(resources).as_posix(), p) for p in resources.rglob("*") if p.is_file()]

        def write(partial: Path) -> None:
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
                for name, path in sorted(entries):
                    jar.writestr(zipfile.ZipInfo(name, _ZIP_TIME), path.read_bytes(), zipfile.ZIP_DEFLATED)

        _atomically(target, write)
    log.info("built the topics JVM reader: %s", target)


def _atomically(target: Path, write: Callable[[Path], object]) -> None:
    """Writes through a temporary file beside the target and renames: concurrent builders never see half."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    os.close(handle)
    try:
        write(Path(partial))
        os.chmod(partial, 0o644)
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


def reader_jar() -> Path | None:
    """The reader's jar, built if need be; None (logged) where it cannot be built: reads then use Python."""
    try:
        return build_reader_jar()
    except (JvmBuildError, OSError) as error:
        log.warning("topic reads use the Python data source: the JVM reader is unavailable (%s)", error)
        return None


class JvmBuildError(RuntimeError):
    """The JVM reader's jar cannot be built here."""


if __name__ == "__main__":  # scripts/bootstrap.sh
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    print(build_reader_jar())
