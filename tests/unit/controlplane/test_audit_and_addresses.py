from django.test import RequestFactory

from controlplane.audit.services import REDACTED, redact
from controlplane.core.api.client_address import client_address


def test_it_redacts_secret_looking_keys_at_any_depth() -> None:
    snapshot = {
        "name": "ci",
        "secret": "shk_x",
        "new": {"secret_hash": "ab", "password": "p", "role": "viewer"},
        "items": [{"token": "t"}],
    }

    assert redact(snapshot) == {
        "name": "ci",
        "secret": REDACTED,
        "new": {"secret_hash": REDACTED, "password": REDACTED, "role": "viewer"},
        "items": [{"token": REDACTED}],
    }


def test_it_records_the_peer_address_and_ignores_forwarded_headers_by_default(settings) -> None:
    settings.TRUST_X_FORWARDED_FOR = False
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="203.0.113.9")

    assert client_address(request) == "10.0.0.5"


def test_behind_a_trusted_proxy_it_takes_the_address_the_proxy_appended(settings) -> None:
    settings.TRUST_X_FORWARDED_FOR = True
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9")

    assert client_address(request) == "203.0.113.9"


def test_a_garbage_forwarded_header_falls_back_to_the_peer_address(settings) -> None:
    settings.TRUST_X_FORWARDED_FOR = True
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="not-an-ip")

    assert client_address(request) == "10.0.0.1"
