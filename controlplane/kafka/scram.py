"""SCRAM credentials of cluster users: set and removed (AlterUserScramCredentials)."""

from __future__ import annotations

from confluent_kafka.admin import (
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from controlplane.kafka.connection import DEFAULT_TIMEOUT_SECONDS, Connection, admin_client, await_result

SCRAM_MECHANISMS = {
    "SCRAM-SHA-256": ScramMechanism.SCRAM_SHA_256,
    "SCRAM-SHA-512": ScramMechanism.SCRAM_SHA_512,
}


def upsert_scram_credential(
    connection: Connection,
    *,
    user: str,
    mechanism: str,
    password: str,
    salt: bytes,
    iterations: int = 8192,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    upsertion = UserScramCredentialUpsertion(
        user, ScramCredentialInfo(SCRAM_MECHANISMS[mechanism], iterations), password.encode(), salt
    )
    admin = admin_client(connection, timeout_seconds)
    for future in admin.alter_user_scram_credentials([upsertion], request_timeout=timeout_seconds).values():
        await_result(future, "AlterUserScramCredentials", timeout_seconds)


def delete_scram_credential(
    connection: Connection, *, user: str, mechanism: str, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    deletion = UserScramCredentialDeletion(user, SCRAM_MECHANISMS[mechanism])
    admin = admin_client(connection, timeout_seconds)
    for future in admin.alter_user_scram_credentials([deletion], request_timeout=timeout_seconds).values():
        await_result(future, "AlterUserScramCredentials", timeout_seconds)
