"""Where the CLI keeps its login: a JSON file readable by its owner only, holding an API key or a single
sign-on session (the provider's access and refresh tokens). STREAMHUB_URL and STREAMHUB_API_KEY override it
(CI passes the key as a secret variable, never as an argument that lands in logs)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .oidc import Tokens


def config_path() -> Path:
    base = os.environ.get("STREAMHUB_CONFIG") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"), "streamhub", "config.json"
    )
    return Path(base)


@dataclass(frozen=True)
class OidcSession:
    """A person signed in with the identity provider: what renewing the access token needs."""

    issuer: str
    client_id: str
    audience: str
    token_endpoint: str
    revocation_endpoint: str | None
    tokens: Tokens


@dataclass(frozen=True)
class Login:
    url: str
    api_key: str | None = None
    oidc: OidcSession | None = None

    @property
    def bearer(self) -> str:
        if self.api_key:
            return self.api_key
        assert self.oidc is not None
        return self.oidc.tokens.access_token

    def with_tokens(self, tokens: Tokens) -> Login:
        assert self.oidc is not None
        return replace(self, oidc=replace(self.oidc, tokens=tokens))


def _stored() -> dict:
    path = config_path()
    return json.loads(path.read_text()) if path.exists() else {}


def _stored_login(stored: dict) -> Login | None:
    url = str(stored.get("url") or "").rstrip("/")
    if stored.get("api_key"):
        return Login(url=url, api_key=stored["api_key"])
    if session := stored.get("oidc"):
        return Login(url=url, oidc=OidcSession(**{**session, "tokens": Tokens(**session["tokens"])}))
    return None


def load() -> Login | None:
    stored = _stored_login(_stored())
    url = (os.environ.get("STREAMHUB_URL") or (stored.url if stored else "")).rstrip("/")
    if not url:
        return None
    if api_key := os.environ.get("STREAMHUB_API_KEY") or (stored and stored.api_key):
        return Login(url=url, api_key=api_key)
    if stored is None or stored.url != url:  # tokens are for the server that offered their provider only
        return None
    return stored


def save(login: Login) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    stored: dict = {"url": login.url}
    if login.api_key:
        stored["api_key"] = login.api_key
    if login.oidc:
        stored["oidc"] = asdict(login.oidc)
    # Created owner-only before the secret is written, so it is never readable by others even briefly.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(stored, file)
    os.chmod(path, 0o600)
    return path


def forget() -> tuple[Path, Login | None]:
    """Deletes the stored login (not the environment's); returns what it was, for revoking its tokens."""
    path = config_path()
    previous = _stored_login(_stored())
    path.unlink(missing_ok=True)
    return path, previous
