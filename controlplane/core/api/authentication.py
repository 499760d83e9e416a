"""What every authentication of the API shares. The authentication classes live with what they check
(accounts: API keys; people: identity provider access tokens), above the apps whose APIs they serve."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, SessionAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request


def bearer_token(request: Request) -> bytes | None:
    """The token of an `Authorization: Bearer <token>` header, None without one."""
    parts = get_authorization_header(request).split()
    if not parts or parts[0].lower() != b"bearer":
        return None
    if len(parts) != 2:
        raise AuthenticationFailed("Send the key as `Authorization: Bearer <key>`.", code="invalid_api_key")
    return parts[1]


class BearerAuthentication(BaseAuthentication):
    """A credential sent as `Authorization: Bearer <token>`."""

    def authenticate_header(self, request: Request) -> str:
        # Missing or invalid credentials are a 401 with this challenge for every caller (the console treats
        # 401 as "sign in again"); 403 is kept for authenticated callers who may not do what they asked.
        return 'Bearer realm="api"'


class BearerScheme(OpenApiAuthenticationExtension):
    """The OpenAPI security scheme of a BearerAuthentication; a subclass names its `target_class`, `name`,
    the token's format and what it is (this base matches no class)."""

    bearer_format = ""
    description = ""

    def get_security_definition(self, auto_schema: object) -> dict:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": self.bearer_format,
            "description": self.description,
        }


def enforce_csrf(request: Request) -> None:
    """DRF checks CSRF only for already-authenticated sessions; login and logout need it too
    (a forged login would sign a victim in to the attacker's account)."""
    SessionAuthentication().enforce_csrf(request._request)
