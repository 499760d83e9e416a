"""Small per-partition checkpoint files holding one integer, replaced atomically."""

import os
from pathlib import Path


def read_number(path: Path, default: int) -> int:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return default


def write_number(path: Path, value: int) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(f"{value}\n")
    os.replace(temporary, path)
