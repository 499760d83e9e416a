"""The artifacts that carry the code and its dependencies to executors sharing nothing with this checkout."""

import subprocess
import sys
import zipfile

from controlplane.spark import artifact


def test_the_code_artifact_holds_every_first_party_module_the_source_imports_and_is_reproducible(tmp_path):
    first = artifact.build_code_artifact(tmp_path / "a")
    second = artifact.build_code_artifact(tmp_path / "b")
    assert first.name == second.name
    assert first.read_bytes() == second.read_bytes()
    assert first.name.startswith(f"streamhub-spark-{artifact.project_version()}-")
    names = set(zipfile.ZipFile(first).namelist())
    assert {"controlplane/spark/native/record_decoder.c", "broker/wire/records/batch.py"} <= names
    assert "controlplane/kafka/wire.py" in names
    assert not any(name.startswith(("controlplane/jobs/", "console/")) for name in names)  # no Django
    # Imported from the zip alone (cwd and path without the repository), the decoder's source is found.
    probe = (
        "import controlplane.spark.topic_source, controlplane.spark.submit, importlib.resources as r;"
        "from controlplane.spark.raw_reading import SOURCE;"
        "assert r.files(SOURCE[0]).joinpath(SOURCE[1]).read_bytes().startswith(b'/*');"
        "import controlplane; print(controlplane.__file__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd="/",
        env={"PYTHONPATH": str(first), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(first))


def test_the_dependency_archive_lists_the_pinned_third_party_packages_but_not_spark():
    names = {d.metadata["Name"].lower().replace("_", "-") for d in artifact.dependency_distributions()}
    assert {"confluent-kafka", "pyarrow", "kio", "cramjam", "crc32c", "scramp", "numpy"} <= names
    assert not names & {"pyspark", "py4j", "django", "celery"}


def test_a_change_of_code_makes_a_new_artifact_name(tmp_path):
    root = tmp_path / "checkout"
    (root / "controlplane" / "spark").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nversion = "9.9"\n')
    (root / "controlplane" / "__init__.py").write_text("")
    module = root / "controlplane" / "spark" / "__init__.py"
    module.write_text("VALUE = 1\n")
    before = artifact.build_code_artifact(tmp_path / "out", repo_root=root)
    module.write_text("VALUE = 2\n")
    after = artifact.build_code_artifact(tmp_path / "out", repo_root=root)
    assert before.name != after.name
    assert before.name.startswith("streamhub-spark-9.9-")
