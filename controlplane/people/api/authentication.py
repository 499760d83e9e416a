"""A person's script calling with the single sign-on provider's access token (settings'
DEFAULT_AUTHENTICATION_CLASSES): the request's `auth` says how its caller acts (tenancy.access.Credentials)."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from controlplane.core.api.authentication import BearerAuthentication, BearerScheme, bearer_token
from controlplane.people import oidc
from controlplane.people.choices import IdentitySource
from controlplane.people.models import Identity
from controlplane.tenancy.access import Actor


@dataclass(frozen=True)
class IdpAccessToken:
    """request.auth for a person's script calling with the identity provider's access token."""

    claims: dict

    def actor(self, user: Any, client_address: str | None) -> Actor:
        """The person acts with their own roles; the audit log says they came with an access token."""
        return Actor(user=user, client_address=client_address, via_access_token=True)


class IdpAccessTokenAuthentication(BearerAuthentication):
    """`Authorization: Bearer <JWT>` issued by the single sign-on provider for this API (its audience is
    OIDC_API_AUDIENCE): the person it names (by issuer and subject, signed in to the console at least once)
    acts with their own roles. Off while OIDC_API_AUDIENCE is empty; API keys (`shk_…`) pass on to the next
    class untouched."""

    def authenticate(self, request: Request) -> tuple[object, IdpAccessToken] | None:
        config = oidc.current_config()
        if config is None or not settings.OIDC_API_AUDIENCE:
            return None
        token = bearer_token(request)
        if token is None or token.startswith(b"shk_") or token.count(b".") != 2:
            return None
        try:
            claims = oidc.verify_access_token(
                config, token.decode("ascii"), audience=settings.OIDC_API_AUDIENCE
            )
        except (oidc.OidcError, UnicodeDecodeError) as error:
            raise AuthenticationFailed(str(error), code="invalid_token") from error
        identity = (
            Identity.objects.select_related("user")
            .filter(source=IdentitySource.OIDC, issuer=config.issuer, subject=claims["sub"])
            .first()
        )
        if identity is None or not identity.user.is_active:
            raise AuthenticationFailed(
                "No active person here has this token's subject; sign in to the console once first.",
                code="invalid_token",
            )
        return identity.user, IdpAccessToken(claims)


class IdpAccessTokenAuthenticationScheme(BearerScheme):
    target_class = IdpAccessTokenAuthentication
    name = "idpAccessToken"
    bearer_format = "JWT"
    description = (
        "An access token of the single sign-on provider issued for this API's audience "
        "(OIDC_API_AUDIENCE), when enabled; it acts as the person it names."
    )
