"""Delegation tokens (KIP-48): token records, their HMAC and the SCRAM credentials they log in with.

A token is stored as its id, owner, requester, renewers and timestamps (the SecurityStore's
`tokens`, changed by `upsert_token` / `delete_token` records that go through the metadata log). The HMAC is never stored: every broker recomputes it as
HMAC-SHA512(`delegation.token.secret.key`, token id), as Kafka does, so the data directory and
the metadata log hold nothing a client could log in with. A client authenticates over SCRAM
with the extension `tokenauth=true`, the token id as user name and the base64 HMAC as password.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from dataclasses import dataclass

from broker.auth.scram_store import DEFAULT_ITERATIONS, TokenLogin, credential_from_password
from broker.metadata.security_records import DeleteTokenRecord, UpsertTokenRecord
from broker.metadata.security_registry import SecurityStore


@dataclass(frozen=True, slots=True)
class DelegationToken:
    token_id: str
    owner: str  # principal, "User:name"
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    expiry_ms: int
    max_ms: int

    def to_json(self) -> dict[str, object]:
        return {
            "token_id": self.token_id,
            "owner": self.owner,
            "requester": self.requester,
            "renewers": list(self.renewers),
            "issue_ms": self.issue_ms,
            "expiry_ms": self.expiry_ms,
            "max_ms": self.max_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> DelegationToken:
        return cls(
            token_id=str(data["token_id"]),
            owner=str(data["owner"]),
            requester=str(data["requester"]),
            renewers=tuple(str(r) for r in data["renewers"]),  # type: ignore[attr-defined]
            issue_ms=int(data["issue_ms"]),  # type: ignore[call-overload]
            expiry_ms=int(data["expiry_ms"]),  # type: ignore[call-overload]
            max_ms=int(data["max_ms"]),  # type: ignore[call-overload]
        )

    def owner_or_renewer(self, principal: str) -> bool:
        """Kafka's TokenInformation.ownerOrRenewer: who may renew, expire and see the token."""
        return principal in (self.owner, self.requester) or principal in self.renewers


class DelegationTokens:
    """Token lookups, HMACs and change records over the SecurityStore."""

    def __init__(self, security: SecurityStore, secret_key: str) -> None:
        self._security = security
        self._secret = secret_key.encode("utf-8")
        # HMAC -> token id, rebuilt when the store changes: Renew and Expire name tokens by HMAC.
        self._by_hmac: dict[bytes, str] = {}
        self._indexed_version = -1

    @property
    def enabled(self) -> bool:
        """Without `delegation.token.secret.key` the token APIs answer DELEGATION_TOKEN_AUTH_DISABLED."""
        return bool(self._secret)

    @staticmethod
    def new_token_id() -> str:
        return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")

    def hmac_of(self, token_id: str) -> bytes:
        return hmac.digest(self._secret, token_id.encode("utf-8"), hashlib.sha512)

    def get(self, token_id: str) -> DelegationToken | None:
        data = self._security.tokens.get(token_id)
        return DelegationToken.from_json(data) if data is not None else None

    def all(self) -> list[DelegationToken]:
        return [DelegationToken.from_json(data) for _id, data in sorted(self._security.tokens.items())]

    def find_by_hmac(self, token_hmac: bytes) -> DelegationToken | None:
        if self._indexed_version != self._security.version:
            self._by_hmac = {self.hmac_of(token_id): token_id for token_id in list(self._security.tokens)}
            self._indexed_version = self._security.version
        token_id = self._by_hmac.get(token_hmac)
        return self.get(token_id) if token_id is not None else None

    @staticmethod
    def upsert_record(token: DelegationToken) -> UpsertTokenRecord:
        return UpsertTokenRecord(token.to_json())

    @staticmethod
    def delete_record(token_id: str) -> DeleteTokenRecord:
        return DeleteTokenRecord(token_id)

    def expired_records(self, now_ms: int) -> list[DeleteTokenRecord]:
        """Delete records for every token whose expiry time has passed (the expiry sweep)."""
        return [self.delete_record(t.token_id) for t in self.all() if t.expiry_ms < now_ms]

    def login(self, token_id: str, mechanism: str, now_ms: int) -> TokenLogin | None:
        """SCRAM credential of a live token, the owner it logs in as and when it expires; None:
        unknown or expired.

        The password is the base64 HMAC; the salt is derived from it too, so every broker derives
        the same credential without storing one.
        """
        if not self.enabled:
            return None
        token = self.get(token_id)
        if token is None or token.expiry_ms < now_ms:
            return None
        token_hmac = self.hmac_of(token_id)
        salt = hmac.digest(token_hmac, b"scram salt", hashlib.sha256)[:24]
        password = base64.b64encode(token_hmac).decode()
        credential = credential_from_password(mechanism, password, DEFAULT_ITERATIONS, salt=salt)
        return TokenLogin(credential, token.owner, token.expiry_ms)
