"""Encryption at rest for credentials the control plane must be able to read back (Fernet).

The key comes from FIELD_ENCRYPTION_KEY (one or more comma-separated keys: the first encrypts, all
decrypt, so keys can be rotated), or else is derived from SECRET_KEY.
"""

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class UnreadableSecret(Exception):
    """A stored secret cannot be decrypted with the configured keys."""


def _fernet_key(material: str) -> bytes:
    """A Fernet key as given, or one derived from any other text."""
    try:
        Fernet(material.encode())
        return material.encode()
    except ValueError:
        digest = hashlib.sha256(b"streamhub field encryption\0" + material.encode()).digest()
        return base64.urlsafe_b64encode(digest)


def _cipher() -> MultiFernet:
    configured = [k.strip() for k in getattr(settings, "FIELD_ENCRYPTION_KEY", "").split(",") if k.strip()]
    materials = configured or [settings.SECRET_KEY]
    return MultiFernet([Fernet(_fernet_key(material)) for material in materials])


def encrypt_secret(plaintext: str) -> str:
    if not plaintext:
        return ""
    return _cipher().encrypt(plaintext.encode()).decode()


def decrypt_secret(token: str) -> str:
    if not token:
        return ""
    try:
        return _cipher().decrypt(token.encode()).decode()
    except InvalidToken as error:
        raise UnreadableSecret(
            "The stored credential cannot be decrypted with the configured keys."
        ) from error
