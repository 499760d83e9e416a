import pytest
from cryptography.fernet import Fernet

from controlplane.core.encryption import UnreadableSecret, decrypt_secret, encrypt_secret


def test_it_round_trips_a_secret_without_storing_it_in_clear(settings) -> None:
    settings.FIELD_ENCRYPTION_KEY = ""

    stored = encrypt_secret("admin-secret")

    assert "admin-secret" not in stored
    assert decrypt_secret(stored) == "admin-secret"


def test_empty_secrets_stay_empty() -> None:
    assert encrypt_secret("") == ""
    assert decrypt_secret("") == ""


def test_it_uses_the_configured_key_rather_than_the_secret_key(settings) -> None:
    settings.FIELD_ENCRYPTION_KEY = Fernet.generate_key().decode()
    stored = encrypt_secret("admin-secret")

    settings.FIELD_ENCRYPTION_KEY = ""

    with pytest.raises(UnreadableSecret):
        decrypt_secret(stored)


def test_an_old_key_still_decrypts_after_a_rotation(settings) -> None:
    old, new = Fernet.generate_key().decode(), "any passphrase becomes a key"
    settings.FIELD_ENCRYPTION_KEY = old
    stored_with_old = encrypt_secret("admin-secret")

    settings.FIELD_ENCRYPTION_KEY = f"{new},{old}"

    assert decrypt_secret(stored_with_old) == "admin-secret"
    settings.FIELD_ENCRYPTION_KEY = new
    assert decrypt_secret(encrypt_secret("next")) == "next"
