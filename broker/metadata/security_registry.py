"""The persisted security state: ACL bindings, SCRAM credentials, delegation tokens and client quotas.

Every change is a typed security record (`broker.metadata.security_records`, applied there, the
same code as the controller's image) and folded into a JSON snapshot written with write-then-rename. The file holds salted,
iterated SCRAM keys (never a password) and is readable by the broker's user only.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from broker.metadata.security_records import AclTuple, QuotaEntity, SecurityRecord

SNAPSHOT_NAME = "security-metadata.json"


class SecurityStore:
    """ACLs, SCRAM credentials and quotas for one node; listeners hear about every change."""

    def __init__(self, data_dir: Path) -> None:
        self._path = Path(data_dir) / SNAPSHOT_NAME
        self._lock = threading.Lock()
        self.acls: set[AclTuple] = set()
        # user -> mechanism name -> {"salt", "stored_key", "server_key" (hex), "iterations"}
        self.scram: dict[str, dict[str, dict[str, Any]]] = {}
        self.quotas: dict[QuotaEntity, dict[str, float]] = {}
        # token id -> DelegationToken.to_json() (broker/auth/delegation_tokens.py); never the HMAC
        self.tokens: dict[str, dict[str, Any]] = {}
        self.version = 0
        self._listeners: list[Callable[[], None]] = []

    def add_listener(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    # --- persistence -------------------------------------------------------------------

    def load(self) -> None:
        if self._path.exists():
            data = json.loads(self._path.read_text(encoding="utf-8"))
            self.acls = {tuple(acl) for acl in data.get("acls", [])}  # type: ignore[misc]
            self.scram = data.get("scram", {})
            self.tokens = data.get("tokens", {})
            self.quotas = {
                tuple((e[0], e[1]) for e in entry["entity"]): dict(entry["values"])
                for entry in data.get("quotas", [])
            }
        self.version += 1

    def _save(self) -> None:
        data = {
            "acls": sorted(list(acl) for acl in self.acls),
            "scram": self.scram,
            "tokens": self.tokens,
            "quotas": [
                {"entity": [list(e) for e in entity], "values": values}
                for entity, values in sorted(self.quotas.items(), key=lambda kv: repr(kv[0]))
            ],
        }
        self._path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self._path)

    # --- records -----------------------------------------------------------------------

    def apply_records(self, records: Iterable[SecurityRecord]) -> None:
        """Apply change records together, persist once, then tell the listeners."""
        with self._lock:
            for record in records:
                record.apply_to(self)
            self._save()
            self.version += 1
        for listener in self._listeners:
            listener()

    def replace_all(self, records: Iterable[SecurityRecord]) -> None:
        """Forget everything, then apply `records` (a broker adopting the controller's state)."""
        with self._lock:
            self.acls, self.scram, self.quotas, self.tokens = set(), {}, {}, {}
            for record in records:
                record.apply_to(self)
            self._save()
            self.version += 1
        for listener in self._listeners:
            listener()
