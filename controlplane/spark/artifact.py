"""What a Spark cluster needs to run the topic data source and the job catalog, built from this checkout.

Executors on another host share neither the control plane's filesystem nor its Python path, so a run ships:

- the code artifact, `streamhub-spark-<version>-<digest>.zip`: every first-party module the data source and
  the jobs import (found by following their imports, so nothing is listed by hand), with the native record
  decoder's C source, which executors compile with their own `cc` on first use (raw_reading.py). Given to
  spark-submit with `--py-files` (or to a Spark Connect session with `addArtifacts(pyfile=True)`).
- the JVM reader's jar (jvm.py), compiled with the JDK here against PySpark's jars: given with `--jars`, so
  that batch reads of topics run on the JVM (None where there is no JDK: the Python source reads then).
- the dependency archive, `streamhub-spark-deps-<python>-<digest>.tar.gz`: the installed files of the
  third-party distributions that code imports (confluent-kafka, pyarrow, kio, ...) and of everything they
  require, as pinned in the control plane's environment. Given with `--archives …#<alias>` and put on the
  executors' Python path; the executors' interpreter must be the same CPython minor version (the name says
  which), as the archive holds compiled extensions. PySpark itself and py4j come with Spark.

Both names carry a digest of their content: a rebuilt checkout gets new names, an unchanged one reuses the
built files, and a cluster never mixes versions.
"""

from __future__ import annotations

import ast
import hashlib
import io
import logging
import os
import re
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = ("controlplane", "broker")
ENTRY_PACKAGE = Path("controlplane") / "spark"
NATIVE_SOURCES = ("*.c",)
# Spark puts its own PySpark and py4j on every Python worker's path.
PROVIDED_BY_SPARK = {"pyspark", "py4j"}
# A fixed time for every zip entry: the same sources always make the same bytes.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def project_version(repo_root: Path = REPO_ROOT) -> str:
    with open(repo_root / "pyproject.toml", "rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def _module_file(repo_root: Path, module: str) -> Path | None:
    base = repo_root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_modules(path: Path, module: str) -> set[str]:
    """Every module an import statement of the file names (absolute names; relative ones resolved)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            names.add(source)
            # `from package import module` imports a module, `from module import name` does not: try both.
            names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


def code_files(repo_root: Path = REPO_ROOT) -> tuple[list[Path], set[str]]:
    """First-party files the data source and the jobs need (relative to the root), and the top-level names
    of the third-party modules they import."""
    pending = [
        ".".join(path.relative_to(repo_root).with_suffix("").parts).removesuffix(".__init__")
        for path in sorted((repo_root / ENTRY_PACKAGE).rglob("*.py"))
    ]
    seen: set[str] = set()
    files: set[Path] = set()
    third_party: set[str] = set()
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        top = module.split(".")[0]
        if top not in FIRST_PARTY:
            if top and top not in sys.stdlib_module_names:
                third_party.add(top)
            continue
        path = _module_file(repo_root, module)
        if path is None:
            continue  # a name imported from a module, not a module
        files.add(path.relative_to(repo_root))
        parts = module.split(".")
        pending.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # the packages above it
        pending.extend(_imported_modules(path, module))
    for pattern in NATIVE_SOURCES:
        files.update(p.relative_to(repo_root) for p in (repo_root / ENTRY_PACKAGE).rglob(pattern))
    return sorted(files), third_party


def _digest(entries: Iterable[tuple[str, bytes]]) -> str:
    hasher = hashlib.sha256()
    for name, content in entries:
        hasher.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    return hasher.hexdigest()[:12]


def _atomically(target: Path, write: Callable[[Path], None]) -> Path:
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
    return target


def build_code_artifact(directory: Path, repo_root: Path = REPO_ROOT) -> Path:
    """The zip for --py-files (reused when this checkout's code is unchanged)."""
    files, _ = code_files(repo_root)
    entries = [(path.as_posix(), (repo_root / path).read_bytes()) for path in files]
    target = directory / f"streamhub-spark-{project_version(repo_root)}-{_digest(entries)}.zip"
    if target.exists():
        return target

    def write(path: Path) -> None:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, content in entries:
                archive.writestr(zipfile.ZipInfo(name, _ZIP_TIME), content, zipfile.ZIP_DEFLATED)

    return _atomically(target, write)


def build_jvm_reader(directory: Path) -> Path | None:
    """The jar for --jars (reused while its sources and PySpark's version are unchanged), or None (logged) where
    it cannot be built."""
    from controlplane.spark.jvm import JvmBuildError, build_reader_jar

    try:
        return build_reader_jar(directory)
    except (JvmBuildError, OSError) as error:
        log.warning(
            "job runs read topics with the Python data source: the JVM reader is unavailable (%s)", error
        )
        return None


def dependency_distributions(repo_root: Path = REPO_ROOT) -> list[metadata.Distribution]:
    """The installed distributions the code imports, with everything they require (extras left out)."""
    _, modules = code_files(repo_root)
    by_module = metadata.packages_distributions()  # scans every installed distribution: once
    pending = sorted({name for module in modules for name in by_module.get(module, [])})
    found: dict[str, metadata.Distribution] = {}
    while pending:
        name = pending.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found or key in PROVIDED_BY_SPARK:
            continue
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional requirement for another platform or Python
        found[key] = distribution
        for requirement in distribution.requires or []:
            marker = requirement.partition(";")[2].strip()
            if marker and not _marker_holds(marker):  # extras, other platforms
                continue
            match = _REQUIREMENT_NAME.match(requirement)
            if match:
                pending.append(match.group(1))
    return [found[key] for key in sorted(found)]


def _marker_holds(marker: str) -> bool:
    from packaging.markers import Marker

    return Marker(marker).evaluate({"extra": ""})


def python_tag() -> str:
    return f"cp{sys.version_info.major}{sys.version_info.minor}"


def build_dependency_archive(directory: Path, repo_root: Path = REPO_ROOT) -> Path:
    """The tar.gz for --archives: site-packages files of the dependencies (reused while they are unchanged)."""
    distributions = dependency_distributions(repo_root)
    pins = "\n".join(f"{d.metadata['Name']}=={d.version}" for d in distributions)
    digest = hashlib.sha256(f"{sys.platform}\n{python_tag()}\n{pins}".encode()).hexdigest()[:12]
    target = directory / f"streamhub-spark-deps-{python_tag()}-{digest}.tar.gz"
    if target.exists():
        return target

    def write(path: Path) -> None:
        # Level 1: the archive is built once per set of versions, but on the machine that serves the API.
        with tarfile.open(path, "w:gz", compresslevel=1) as archive:
            for distribution in distributions:
                root = Path(distribution.locate_file("")).resolve()
                for file in distribution.files or []:
                    source = Path(distribution.locate_file(file)).resolve()
                    # Console scripts live outside site-packages; executors import, they do not run them.
                    if source.is_file() and source.is_relative_to(root) and "__pycache__" not in file.parts:
                        archive.add(source, arcname=source.relative_to(root).as_posix(), recursive=False)
            info = tarfile.TarInfo("streamhub-spark-deps.txt")
            content = f"{python_tag()}\n{pins}\n".encode()
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))

    return _atomically(target, write)
