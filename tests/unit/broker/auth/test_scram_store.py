"""SCRAM credentials: derived keys only, persisted, bootstrap users."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from scramp import ScramMechanism

from broker.auth.scram_store import ScramStore, credential_from_password, credential_from_salted_password
from broker.metadata.security_registry import SecurityStore


def test_keys_match_scramp_for_the_same_salt_and_iterations() -> None:
    salt = b"0123456789abcdef"
    ours = credential_from_password("SCRAM-SHA-512", "pw", iterations=4096, salt=salt)
    _salt, stored_key, server_key, _i = ScramMechanism("SCRAM-SHA-512").make_auth_info("pw", 4096, salt)
    assert (ours.stored_key, ours.server_key) == (stored_key, server_key)


def test_a_salted_password_from_the_admin_api_gives_the_same_credential() -> None:
    salt = b"salt-salt-salt"
    salted = hashlib.pbkdf2_hmac("sha256", b"pw", salt, 8192)
    assert credential_from_salted_password("SCRAM-SHA-256", salted, salt, 8192) == credential_from_password(
        "SCRAM-SHA-256", "pw", 8192, salt
    )


def test_credentials_persist_without_the_password(tmp_path: Path) -> None:
    security = SecurityStore(tmp_path)
    security.load()
    store = ScramStore(security)
    store.apply([store.upsert_record("alice", credential_from_password("SCRAM-SHA-256", "very-secret"))])
    text = (tmp_path / "security-metadata.json").read_text()
    assert "very-secret" not in text
    reloaded = SecurityStore(tmp_path)
    reloaded.load()
    assert ScramStore(reloaded).check_password("alice", "very-secret")
    assert not ScramStore(reloaded).check_password("alice", "other")


def test_bootstrap_users_are_created_once_and_never_overwritten(tmp_path: Path) -> None:
    security = SecurityStore(tmp_path)
    security.load()
    store = ScramStore(security)
    assert store.create_bootstrap_users("admin:SCRAM-SHA-512:first;admin:SCRAM-SHA-256:first") == [
        "admin",
        "admin",
    ]
    assert store.create_bootstrap_users("admin:SCRAM-SHA-512:second") == []
    assert store.check_password("admin", "first")
    assert store.mechanisms_of("admin") == {"SCRAM-SHA-256": 4096, "SCRAM-SHA-512": 4096}


def test_a_malformed_bootstrap_entry_names_the_user_but_not_the_password(tmp_path: Path) -> None:
    security = SecurityStore(tmp_path)
    security.load()
    with pytest.raises(ValueError, match="admin") as error:
        ScramStore(security).create_bootstrap_users("admin:MD5:hunter2")
    assert "hunter2" not in str(error.value)
