"""Where the CLI keeps its login: a JSON file readable by its owner only. STREAMHUB_URL and STREAMHUB_API_KEY
override it (CI passes the key as a secret variable, never as an argument that lands in logs)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path


def config_path() -> Path:
    base = os.environ.get("STREAMHUB_CONFIG") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"), "streamhub", "config.json"
    )
    return Path(base)


@dataclass(frozen=True)
class Login:
    url: str
    api_key: str


def load() -> Login | None:
    stored: dict[str, str] = {}
    path = config_path()
    if path.exists():
        stored = json.loads(path.read_text())
    url = os.environ.get("STREAMHUB_URL") or stored.get("url")
    api_key = os.environ.get("STREAMHUB_API_KEY") or stored.get("api_key")
    if not url or not api_key:
        return None
    return Login(url=url.rstrip("/"), api_key=api_key)


def save(login: Login) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Created owner-only before the key is written, so it is never readable by others even briefly.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump({"url": login.url, "api_key": login.api_key}, file)
    os.chmod(path, 0o600)
    return path
