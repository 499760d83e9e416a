"""Reading a file set: YAML files (several documents each, `---` between them) from files or directories.

An AlertChannel's `url` and a StreamingJob's `password` are credentials and never sit in the files: each
is written `${ENV_VAR}` (read from the environment) or `${file:path}` (a file's content, the path relative
to the document's file), and read here, on the machine that plans, just before the documents are sent."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

SUFFIXES = (".yaml", ".yml")


class DocumentError(Exception):
    pass


SECRET_REFERENCE = re.compile(r"^\$\{(?:file:(?P<file>[^}]+)|(?P<env>[A-Za-z_][A-Za-z0-9_]*))\}$")
# The spec fields that hold credentials, by kind.
SECRET_FIELDS = {"AlertChannel": ("url",), "StreamingJob": ("password",)}


def resolve_secrets(document: dict[str, Any], file: Path, number: int) -> dict[str, Any]:
    """The document with its credential fields read from the environment or their files."""
    fields = SECRET_FIELDS.get(document.get("kind"), ())
    spec = document.get("spec")
    if not fields or not isinstance(spec, dict):
        return document
    resolved = dict(spec)
    for field in fields:
        value = spec.get(field)
        if value is None or value == "":
            continue
        where = f"{file}: document {number} ({document['kind']}), spec.{field}"
        match = SECRET_REFERENCE.match(value) if isinstance(value, str) else None
        if match is None:
            raise DocumentError(
                f"{where} is a credential: write ${{ENV_VAR}} or ${{file:path}}, not the value itself"
            )
        if match["env"]:
            if match["env"] not in os.environ:
                raise DocumentError(f"{where}: the environment variable {match['env']} is not set")
            resolved[field] = os.environ[match["env"]]
        else:
            path = (file.parent / match["file"]).resolve()
            try:
                resolved[field] = path.read_text().strip()
            except OSError as error:
                raise DocumentError(f"{where}: cannot read {path}: {error.strerror}") from error
    return {**document, "spec": resolved}


def yaml_files(paths: tuple[str, ...]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        elif path.is_file():
            files.append(path)
        else:
            raise DocumentError(f"{raw}: no such file or directory")
    return files


def read_documents(paths: tuple[str, ...]) -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = []
    for file in yaml_files(paths):
        try:
            loaded = list(yaml.safe_load_all(file.read_text()))
        except yaml.YAMLError as error:
            raise DocumentError(f"{file}: not valid YAML: {error}") from error
        for number, document in enumerate(loaded, start=1):
            if document is None:
                continue  # an empty document (a trailing ---)
            if not isinstance(document, dict):
                raise DocumentError(f"{file}: document {number} is not a mapping (kind, metadata, spec)")
            documents.append(resolve_secrets(document, file, number))
    return documents


def dump_documents(documents: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False, explicit_start=True)
