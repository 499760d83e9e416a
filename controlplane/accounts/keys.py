"""API key tokens: `shk_<key id>_<secret>`.

The key id is public and indexed, so a lookup is one query by id. Only an HMAC-SHA256 of the secret is
stored, keyed with a pepper derived from SECRET_KEY. The secret is 256 random bits, so a slow password
hash (PBKDF2) would add no protection against guessing while costing every API request tens of
milliseconds; the pepper means a leaked database alone is not enough to test guesses. Rotating
SECRET_KEY therefore invalidates every API key.
"""

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from django.conf import settings

TOKEN_PREFIX = "shk"
KEY_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
KEY_ID_LENGTH = 12
_TOKEN = re.compile(rf"{TOKEN_PREFIX}_([a-z0-9]{{{KEY_ID_LENGTH}}})_([A-Za-z0-9_-]{{43}})")


@dataclass(frozen=True)
class KeyToken:
    key_id: str
    secret: str

    def __str__(self) -> str:
        return f"{TOKEN_PREFIX}_{self.key_id}_{self.secret}"


def generate_token() -> KeyToken:
    key_id = "".join(secrets.choice(KEY_ID_ALPHABET) for _ in range(KEY_ID_LENGTH))
    return KeyToken(key_id=key_id, secret=secrets.token_urlsafe(32))


def parse_token(raw: str) -> KeyToken | None:
    match = _TOKEN.fullmatch(raw)
    return KeyToken(key_id=match[1], secret=match[2]) if match else None


def _pepper() -> bytes:
    return hmac.new(settings.SECRET_KEY.encode(), b"streamhub api key pepper", hashlib.sha256).digest()


def hash_secret(secret: str) -> str:
    return hmac.new(_pepper(), secret.encode(), hashlib.sha256).hexdigest()


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), stored_hash)
