"""Reading a file set: YAML files (several documents each, `---` between them) from files or directories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

SUFFIXES = (".yaml", ".yml")


class DocumentError(Exception):
    pass


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
            documents.append(document)
    return documents


def dump_documents(documents: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False, explicit_start=True)
