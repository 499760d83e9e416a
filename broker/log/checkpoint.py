"""Checkpoint files, replaced atomically: small per-partition files holding one integer, and Kafka's
per-log-dir offset checkpoints (`replication-offset-checkpoint`: one line per partition)."""

import os
from collections.abc import Mapping
from pathlib import Path

# Kafka's OffsetCheckpointFile: a version line, a count line, then "topic partition offset" lines.
OFFSETS_FORMAT_VERSION = 0


def read_number(path: Path, default: int) -> int:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return default


def write_number(path: Path, value: int) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(f"{value}\n")
    os.replace(temporary, path)


class MalformedCheckpointError(ValueError):
    """An offsets checkpoint that is not in Kafka's format (version 0, a count, that many entries)."""


def read_offsets(path: Path) -> dict[tuple[str, int], int]:
    """The (topic, partition) -> offset entries of an offsets checkpoint; empty when there is none."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return {}
    try:
        version, count = int(lines[0]), int(lines[1])
    except (IndexError, ValueError) as error:
        raise MalformedCheckpointError(f"{path}: no version and count lines") from error
    if version != OFFSETS_FORMAT_VERSION:
        raise MalformedCheckpointError(f"{path}: unknown version {version}")
    entries = {}
    for line in lines[2:]:
        # Topic names have no spaces (legal characters: letters, digits, '.', '_', '-').
        fields = line.split(" ")
        if len(fields) != 3:
            raise MalformedCheckpointError(f"{path}: malformed entry {line!r}")
        entries[(fields[0], int(fields[1]))] = int(fields[2])
    if len(entries) != count:
        raise MalformedCheckpointError(f"{path}: {len(entries)} entries where the count says {count}")
    return entries


def write_offsets(path: Path, entries: Mapping[tuple[str, int], int]) -> None:
    """Replace the offsets checkpoint at `path` with `entries` in one rename."""
    lines = [str(OFFSETS_FORMAT_VERSION), str(len(entries))]
    lines.extend(f"{topic} {partition} {offset}" for (topic, partition), offset in entries.items())
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("\n".join(lines) + "\n")
    os.replace(temporary, path)
