"""The JVM reader's jar: compiled with javac against PySpark's jars, once per source version."""

import zipfile

import pytest

from controlplane.spark import artifact, jvm


def test_the_jar_is_built_once_with_the_provider_registered_under_the_source_name(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = jvm.build_reader_jar(tmp_path / "artifacts")
    assert (tmp_path / "cache" / "controlplane-spark" / built.name).exists()
    assert built.name == jvm.jar_name()
    with zipfile.ZipFile(built) as jar:
        names = set(jar.namelist())
        service = jar.read("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister").decode()
    assert service.strip() == "streamhub.spark.TopicsProvider"
    assert "streamhub/spark/TopicsProvider.class" in names
    assert "streamhub/spark/TopicPartitionReader.class" in names
    modified = built.stat().st_mtime_ns
    assert jvm.build_reader_jar(tmp_path / "artifacts") == built
    assert built.stat().st_mtime_ns == modified  # reused, not rebuilt


def test_without_a_jdk_there_is_no_jar_and_reads_stay_on_python(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(jvm.JvmBuildError, match="no javac"):
        jvm.build_reader_jar(tmp_path / "out")
    assert jvm.reader_jar() is None
    assert artifact.build_jvm_reader(tmp_path / "out") is None


def test_sources_that_do_not_compile_fail_the_build_with_javacs_message(tmp_path, monkeypatch):
    sources = tmp_path / "jvm"
    (sources / "src" / "streamhub" / "spark").mkdir(parents=True)
    (sources / "src" / "streamhub" / "spark" / "Broken.java").write_text("class Broken { int x = ; }\n")
    monkeypatch.setattr(jvm, "SOURCE_ROOT", sources)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(jvm.JvmBuildError, match="illegal start of expression"):
        jvm.build_reader_jar(tmp_path / "out")
    assert not list(tmp_path.rglob("*.jar"))
