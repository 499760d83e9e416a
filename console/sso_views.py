"""Browser redirects of single sign-on: to the provider and back. Plain Django views (redirects, not JSON),
outside the REST API's schema. The JSON side (options, profile, logout) is in console/api/views.py."""

from __future__ import annotations

import logging
import time
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import login, logout
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from controlplane.core.api.client_address import client_address
from controlplane.people import oidc, sso

logger = logging.getLogger(__name__)

PENDING_KEY = "oidc_pending"
# The session's single sign-on state: the ID token (hint for logout), refresh token, subject, and when the
# provider must be asked again. Sessions are kept server-side; the browser only holds the session id.
SESSION_KEY = "oidc"
LOGIN_PAGE = "/login"
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _safe_next(value: str | None, request: HttpRequest) -> str:
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")):
        return "/"
    if not url_has_allowed_host_and_scheme(value, allowed_hosts={request.get_host()}):
        return "/"
    return value


def callback_uri(request: HttpRequest, config: oidc.OidcConfig) -> str:
    return config.redirect_uri or request.build_absolute_uri("/api/v1/auth/oidc/callback/")


def _back_to_login(message: str) -> HttpResponse:
    return HttpResponseRedirect(f"{LOGIN_PAGE}?{urlencode({'sso_error': message})}")


@never_cache
@require_GET
def oidc_login(request: HttpRequest) -> HttpResponse:
    config = oidc.current_config()
    if config is None:
        raise Http404("Single sign-on is not configured.")
    try:
        url, pending = oidc.authorization_url(
            config,
            redirect_uri=callback_uri(request, config),
            next_path=_safe_next(request.GET.get("next"), request),
        )
    except oidc.OidcError as error:
        return _back_to_login(str(error))
    request.session[PENDING_KEY] = pending.as_session()
    return HttpResponseRedirect(url)


def remember_tokens(request: HttpRequest, tokens: oidc.Tokens) -> None:
    request.session[SESSION_KEY] = {
        "id_token": tokens.id_token,
        "refresh_token": tokens.refresh_token,
        "subject": tokens.claims["sub"],
        "expires_at": tokens.expires_at,
    }


@never_cache
@require_GET
def oidc_callback(request: HttpRequest) -> HttpResponse:
    config = oidc.current_config()
    if config is None:
        raise Http404("Single sign-on is not configured.")
    pending = oidc.PendingLogin.from_session(request.session.pop(PENDING_KEY, None))
    if pending is None:
        return _back_to_login("This sign-in expired or was started in another browser; sign in again.")
    try:
        tokens = oidc.finish_login(config, pending, request.GET.dict())
        user = sso.sign_in(config, tokens.claims, client_address=client_address(request))
    except oidc.OidcError as error:
        logger.warning("Single sign-on refused: %s", error)
        return _back_to_login(str(error))
    login(request, user, backend=MODEL_BACKEND)
    remember_tokens(request, tokens)
    return HttpResponseRedirect(pending.next_path)


class OidcSessionMiddleware:
    """Re-checks a single sign-on session with the provider when its tokens expire: renewed with the refresh
    token (the mapping is applied again), or ended when there is none or the provider refuses. A person
    removed or deactivated at the provider so loses access within one token lifetime."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if settings.SESSION_COOKIE_NAME not in request.COOKIES or not hasattr(request, "session"):
            # No console session to renew (an API-key call): leave the session unread, so the answer does
            # not vary by cookie and the registry's hot path may answer such calls without Django.
            return self.get_response(request)
        state = request.session.get(SESSION_KEY)
        if state and request.user.is_authenticated and state.get("expires_at", 0) <= time.time():
            # The console fires several requests at once: one renews, the others go on with the session as
            # it is (a refresh token used twice may be refused as replayed, which would sign the person out).
            lock = f"oidc-renewal:{request.session.session_key}"
            if cache.add(lock, 1, timeout=60):
                try:
                    self._renew(request, state)
                finally:
                    cache.delete(lock)
        return self.get_response(request)

    def _renew(self, request: HttpRequest, state: dict) -> None:
        config = oidc.current_config()
        try:
            if config is None or not state.get("refresh_token"):
                raise oidc.OidcError("The sign-in expired.")
            tokens = oidc.refresh(
                config,
                refresh_token=state["refresh_token"],
                subject=state["subject"],
                id_token=state["id_token"],
            )
            user = sso.sign_in(config, tokens.claims, client_address=client_address(request))
            if user.pk != request.user.pk:
                raise oidc.OidcError("The renewed sign-in is another person's.")
        except oidc.OidcError as error:
            logger.info("Single sign-on session of user %s ended: %s", request.user.pk, error)
            logout(request)
            return
        remember_tokens(request, tokens)
