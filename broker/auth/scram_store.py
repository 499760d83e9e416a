"""SCRAM credentials: salted, iterated keys (RFC 5802), persisted through the SecurityStore.

Only the salt, the iteration count, StoredKey and ServerKey are kept. That is enough to run
the SCRAM exchange and to check a PLAIN password (derive, compare), never to recover it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from broker.metadata.security_records import DeleteScramRecord, SecurityRecord, UpsertScramRecord
from broker.metadata.security_registry import SecurityStore

# AlterUserScramCredentials / DescribeUserScramCredentials mechanism codes.
MECHANISM_CODES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MECHANISM_NAMES = {code: name for name, code in MECHANISM_CODES.items()}
HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
# Kafka's bounds for the iteration count.
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
DEFAULT_ITERATIONS = 4096


@dataclass(frozen=True, slots=True)
class ScramCredential:
    mechanism: str
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes

    def to_json(self) -> dict[str, object]:
        return {
            "salt": self.salt.hex(),
            "iterations": self.iterations,
            "stored_key": self.stored_key.hex(),
            "server_key": self.server_key.hex(),
        }

    @classmethod
    def from_json(cls, mechanism: str, data: dict[str, object]) -> ScramCredential:
        return cls(
            mechanism=mechanism,
            salt=bytes.fromhex(str(data["salt"])),
            iterations=int(data["iterations"]),  # type: ignore[call-overload]
            stored_key=bytes.fromhex(str(data["stored_key"])),
            server_key=bytes.fromhex(str(data["server_key"])),
        )


def credential_from_salted_password(
    mechanism: str, salted_password: bytes, salt: bytes, iterations: int
) -> ScramCredential:
    """What AlterUserScramCredentials sends (the client salts and iterates) turned into keys."""
    digest = HASHES[mechanism]
    client_key = hmac.digest(salted_password, b"Client Key", digest)
    stored_key = hashlib.new(digest, client_key).digest()
    server_key = hmac.digest(salted_password, b"Server Key", digest)
    return ScramCredential(mechanism, salt, iterations, stored_key, server_key)


def salt_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(HASHES[mechanism], password.encode("utf-8"), salt, iterations)


def credential_from_password(
    mechanism: str, password: str, iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None
) -> ScramCredential:
    salt = salt if salt is not None else os.urandom(24)
    salted = salt_password(mechanism, password, salt, iterations)
    return credential_from_salted_password(mechanism, salted, salt, iterations)


@dataclass(frozen=True, slots=True)
class TokenLogin:
    """What a delegation token logs in with: its SCRAM credential, its owner, its expiry time."""

    credential: ScramCredential
    owner: str  # principal, "User:name"
    expiry_ms: int


class TokenLogins(Protocol):
    """Delegation tokens as SCRAM sees them (broker.auth.delegation_tokens.DelegationTokens)."""

    @property
    def enabled(self) -> bool: ...

    def login(self, token_id: str, mechanism: str, now_ms: int) -> TokenLogin | None: ...


class ScramStore:
    """Credential lookups and changes; changes are records in the SecurityStore."""

    def __init__(self, security: SecurityStore, tokens: TokenLogins | None = None) -> None:
        self._security = security
        # Delegation tokens log in over SCRAM too (`tokenauth=true`); None: tokens are off.
        self.tokens = tokens

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        data = self._security.scram.get(user, {}).get(mechanism)
        return ScramCredential.from_json(mechanism, data) if data is not None else None

    def mechanisms_of(self, user: str) -> dict[str, int]:
        """Mechanism name -> iterations, for DescribeUserScramCredentials."""
        return {m: int(c["iterations"]) for m, c in self._security.scram.get(user, {}).items()}

    def users(self) -> list[str]:
        return sorted(self._security.scram)

    def upsert_record(self, user: str, credential: ScramCredential) -> UpsertScramRecord:
        return UpsertScramRecord(user, credential.mechanism, credential.to_json())

    @staticmethod
    def delete_record(user: str, mechanism: str) -> DeleteScramRecord:
        return DeleteScramRecord(user, mechanism)

    def apply(self, records: Sequence[SecurityRecord]) -> None:
        self._security.apply_records(records)

    def check_password(self, user: str, password: str) -> bool:
        """PLAIN: true if the password derives the stored key of any of the user's credentials."""
        for mechanism in ("SCRAM-SHA-512", "SCRAM-SHA-256"):
            credential = self.get(user, mechanism)
            if credential is None:
                continue
            salted = salt_password(mechanism, password, credential.salt, credential.iterations)
            candidate = credential_from_salted_password(
                mechanism, salted, credential.salt, credential.iterations
            )
            return hmac.compare_digest(candidate.stored_key, credential.stored_key)
        return False

    def create_bootstrap_users(self, spec: str) -> list[str]:
        """Create the `name:MECHANISM:password;...` users that have no credential yet."""
        records, created = self.bootstrap_user_records(spec)
        if records:
            self.apply(records)
        return created

    def bootstrap_user_records(self, spec: str) -> tuple[list[SecurityRecord], list[str]]:
        """The records creating the bootstrap users that have no credential yet, and their names."""
        records: list[SecurityRecord] = []
        created = []
        for item in (entry.strip() for entry in spec.split(";")):
            if not item:
                continue
            user, _sep, rest = item.partition(":")
            mechanism, _sep, password = rest.partition(":")
            mechanism = mechanism.upper()
            if not user or mechanism not in MECHANISM_CODES or not password:
                # The entry holds a password: name only the user in the error.
                raise ValueError(
                    f"sasl.bootstrap.users: entry for {user!r} is not name:SCRAM-SHA-xxx:password"
                )
            if self.get(user, mechanism) is None:
                records.append(self.upsert_record(user, credential_from_password(mechanism, password)))
                created.append(user)
        return records, created
