from datetime import timedelta

import pytest
from django.utils import timezone

from controlplane.accounts.choices import ApiKeyStatus
from controlplane.accounts.keys import generate_token, hash_secret, parse_token, secret_matches
from controlplane.accounts.models import ApiKey


def test_a_generated_token_parses_back_to_its_key_id_and_secret() -> None:
    token = generate_token()

    assert str(token).startswith(f"shk_{token.key_id}_")
    assert parse_token(str(token)) == token


def test_every_token_is_different() -> None:
    tokens = {str(generate_token()) for _ in range(200)}

    assert len(tokens) == 200


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "shk_",
        "Bearer shk_abc",
        "shk_ABCDEFGHIJKL_" + "a" * 43,  # key ids are lower case
        "shk_abcdefghijkl_" + "a" * 42,
        "shk_abcdefghijkl_" + "a" * 43 + "x",
        "xyz_abcdefghijkl_" + "a" * 43,
        "shk_abcdefghijkl_" + "a" * 42 + "\u00e9",
    ],
)
def test_it_refuses_malformed_tokens(raw: str) -> None:
    assert parse_token(raw) is None


def test_only_a_keyed_hash_of_the_secret_is_kept_and_it_matches_only_that_secret() -> None:
    token = generate_token()
    stored = hash_secret(token.secret)

    assert token.secret not in stored
    assert len(stored) == 64
    assert secret_matches(token.secret, stored)
    assert not secret_matches(generate_token().secret, stored)


def test_the_hash_depends_on_the_server_secret(settings) -> None:
    secret = generate_token().secret
    before = hash_secret(secret)

    settings.SECRET_KEY = "another server secret that is long enough to be realistic"

    assert hash_secret(secret) != before


def test_a_key_status_follows_revocation_expiry_and_rotation() -> None:
    now = timezone.now()

    assert ApiKey().status_at(now) == ApiKeyStatus.ACTIVE
    assert ApiKey(expires_at=now - timedelta(seconds=1)).status_at(now) == ApiKeyStatus.EXPIRED
    assert ApiKey(expires_at=now + timedelta(days=1)).status_at(now) == ApiKeyStatus.ACTIVE
    assert ApiKey(revoked_at=now).status_at(now) == ApiKeyStatus.REVOKED
    assert ApiKey(overlap_until=now + timedelta(minutes=5)).status_at(now) == ApiKeyStatus.ROTATING
    assert ApiKey(overlap_until=now - timedelta(minutes=5)).status_at(now) == ApiKeyStatus.EXPIRED
