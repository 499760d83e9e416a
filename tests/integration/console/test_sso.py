"""Single sign-on against a real OpenID provider (oidc-provider, run by tests/fixtures/oidc.py): the console's
redirects go to the provider, its login form is filled in, and its answer comes back to the callback, so
discovery, PKCE, the code exchange, the key set and every token check run for real. Nothing is mocked."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model
from django.core.cache import cache
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey
from rest_framework.test import APIClient

from controlplane.audit.models import AuditEvent
from controlplane.people import oidc
from controlplane.people.models import Identity
from controlplane.tenancy.models import Membership, Organization, OrgMembership, Team
from tests.fixtures.oidc import (
    CLIENT_ID,
    CLIENT_SECRET,
    OTHER_CLIENT_ID,
    REDIRECT_PATH,
    follow_provider,
    sso_settings,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

PASSWORD = "alice's provider password"
RULES = [
    {"value": "kafka-payments", "organization": "Acme", "team": "payments", "role": "developer"},
    {"value": "kafka-billing", "organization": "Acme", "team": "billing", "role": "viewer"},
    {"value": "kafka-billing-leads", "organization": "Acme", "team": "billing", "role": "team_admin"},
    {"value": "kafka-admins", "organization": "Acme", "org_admin": True},
]
BASE = "http://testserver"


@pytest.fixture(autouse=True)
def _fresh_throttle_counters() -> None:
    cache.clear()


@pytest.fixture
def acme(db) -> Organization:
    organization = Organization.objects.create(name="Acme", slug="acme")
    for name in ("payments", "billing", "search"):
        Team.objects.create(organization=organization, name=name, slug=name)
    return organization


@pytest.fixture
def provider(oidc_provider_factory, settings, acme):
    provider = oidc_provider_factory([BASE])
    provider.set_user("alice", password=PASSWORD, groups=["kafka-payments", "kafka-billing"])
    sso_settings(settings, provider.issuer, RULES)
    return provider


def sign_in(client: APIClient, provider, *, login: str = "alice", password: str = PASSWORD, browser=None):
    """The whole journey: console -> provider -> login form -> console callback. Returns the callback's
    response (a redirect into the console, or back to the login page with the reason)."""
    start = client.get("/api/v1/auth/oidc/login/?next=/teams")
    assert start.status_code == 302, start.content
    authorization = start["Location"]
    assert authorization.startswith(f"{provider.issuer}/auth?")
    query = parse_qs(urlsplit(authorization).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["code_challenge"][0]
    assert query["nonce"][0]
    assert query["state"][0]
    assert query["client_id"] == [CLIENT_ID]
    back = follow_provider(
        authorization, f"{BASE}{REDIRECT_PATH}", form={"login": login, "password": password}, session=browser
    )
    return client.get(back.removeprefix(BASE))


def memberships(username: str) -> dict[str, tuple[str, bool]]:
    return {
        membership.team.name: (membership.role, membership.from_idp)
        for membership in Membership.objects.filter(user__username=username).select_related("team")
    }


def test_sign_in_creates_the_person_and_maps_groups_to_two_teams_with_roles(provider, acme) -> None:
    client = APIClient()
    answer = sign_in(client, provider)

    assert answer.status_code == 302
    assert answer["Location"] == "/teams"
    session = client.get("/api/v1/auth/session/").json()
    assert session["authenticated"]
    assert session["user"]["username"] == "alice"
    user = get_user_model().objects.get(username="alice")
    assert not user.has_usable_password()
    identity = Identity.objects.get(user=user)
    assert (identity.source, identity.issuer, identity.subject) == ("oidc", provider.issuer, "alice")
    assert memberships("alice") == {"payments": ("developer", True), "billing": ("viewer", True)}
    assert OrgMembership.objects.get(user=user, organization=acme).is_org_admin is False
    # Only the mapped teams' resources are visible.
    teams = client.get("/api/v1/teams/").json()["results"]
    assert sorted(team["name"] for team in teams) == ["billing", "payments"]
    profile = client.get("/api/v1/auth/profile/").json()
    assert profile["source"] == "oidc"
    assert profile["idp_groups"] == ["kafka-payments", "kafka-billing"]
    assert {(team["name"], team["role"], team["from_idp"]) for team in profile["teams"]} == {
        ("payments", "developer", True),
        ("billing", "viewer", True),
    }
    actions = sorted(AuditEvent.objects.filter(actor_user=user).values_list("action", "team_name"))
    assert actions == [
        ("user.sso_create", ""),
        ("user.sso_join_organization", ""),
        ("user.sso_join_team", "billing"),
        ("user.sso_join_team", "payments"),
    ]


def test_a_group_removed_at_the_provider_removes_the_team_at_the_next_sign_in(provider, acme) -> None:
    sign_in(APIClient(), provider)
    user = get_user_model().objects.get(username="alice")
    search = Team.objects.get(name="search")
    Membership.objects.create(user=user, team=search, role="viewer")  # granted by hand: never the IdP's

    provider.set_groups("alice", ["kafka-payments", "kafka-billing-leads", "kafka-admins"])
    sign_in(APIClient(), provider)
    assert memberships("alice") == {
        "payments": ("developer", True),
        "billing": ("team_admin", True),
        "search": ("viewer", False),
    }
    assert OrgMembership.objects.get(user=user).is_org_admin is True

    provider.set_groups("alice", ["kafka-payments"])
    client = APIClient()
    sign_in(client, provider)

    assert memberships("alice") == {"payments": ("developer", True), "search": ("viewer", False)}
    assert OrgMembership.objects.get(user=user).is_org_admin is False
    assert get_user_model().objects.filter(username__startswith="alice").count() == 1
    leave = AuditEvent.objects.get(action="user.sso_leave_team")
    assert (leave.team_name, leave.before, leave.organization_id) == (
        "billing",
        {"role": "team_admin"},
        acme.id,
    )
    assert AuditEvent.objects.filter(action="user.sso_change_team_role", team_name="billing").count() == 1
    assert AuditEvent.objects.filter(action="user.sso_change_organization_role").count() == 2
    teams = client.get("/api/v1/teams/").json()["results"]
    assert sorted(team["name"] for team in teams) == ["payments", "search"]


def test_no_matching_group_leaves_the_organization_and_a_same_named_local_account_is_never_taken_over(
    provider, acme
) -> None:
    local = get_user_model().objects.create_user("alice", "alice@example.com", "local password 123")
    provider.set_groups("alice", [])

    answer = sign_in(APIClient(), provider)

    assert answer.status_code == 302
    person = Identity.objects.get(source="oidc", subject="alice").user
    assert person.pk != local.pk
    assert person.username == "alice-2"
    assert not OrgMembership.objects.filter(user=person).exists()
    local.refresh_from_db()
    assert local.check_password("local password 123")


def test_a_wrong_password_at_the_provider_signs_nobody_in(provider) -> None:
    with pytest.raises(AssertionError, match="Wrong username or password"):
        sign_in(APIClient(), provider, password="wrong")
    assert not get_user_model().objects.filter(username="alice").exists()


def test_an_answer_for_another_browser_s_sign_in_is_refused(provider) -> None:
    victim, attacker = APIClient(), APIClient()
    victim.get("/api/v1/auth/oidc/login/")
    start = attacker.get("/api/v1/auth/oidc/login/")
    back = follow_provider(
        start["Location"], f"{BASE}{REDIRECT_PATH}", form={"login": "alice", "password": PASSWORD}
    )

    answer = victim.get(back.removeprefix(BASE))  # login CSRF: the attacker's code in the victim's browser

    assert answer.status_code == 302
    assert answer["Location"].startswith("/login?sso_error=")
    assert "does+not+belong" in answer["Location"]
    assert victim.get("/api/v1/auth/session/").json()["authenticated"] is False


def _token(provider, key, **claims) -> str:
    now = int(time.time())
    payload = {
        "iss": provider.issuer,
        "aud": CLIENT_ID,
        "sub": "alice",
        "iat": now,
        "exp": now + 300,
        "nonce": "n1",
    }
    payload.update(claims)
    payload = {name: value for name, value in payload.items() if value is not None}  # None: left out
    algorithm = "HS256" if isinstance(key, OctKey) else "RS256"
    return jwt.encode({"alg": algorithm, "kid": key.kid or "test-signing-key"}, payload, key)


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"aud": OTHER_CLIENT_ID}, "aud"),
        ({"aud": [OTHER_CLIENT_ID, CLIENT_ID]}, "azp"),  # several audiences but issued to someone else
        ({"exp": int(time.time()) - 120}, "expired"),  # beyond the 60 s leeway
        ({"iss": "https://impostor.example"}, "iss"),
        ({"nonce": "another login's nonce"}, "nonce"),
        ({"iat": None}, "iat"),
    ],
)
def test_tokens_signed_by_the_provider_s_own_key_but_wrong_in_one_claim_are_refused(
    provider, claims, reason
) -> None:
    config = oidc.current_config()
    token = _token(provider, provider.signing_key, **claims)

    with pytest.raises(oidc.OidcError, match=reason):
        oidc.verify_id_token(config, token, nonce="n1")


def test_the_same_token_with_correct_claims_passes_and_skew_within_the_leeway_is_tolerated(provider) -> None:
    config = oidc.current_config()
    token = _token(provider, provider.signing_key, exp=int(time.time()) - 20)  # expired 20 s ago: clock skew
    assert oidc.verify_id_token(config, token, nonce="n1")["sub"] == "alice"


@pytest.mark.parametrize(
    "key",
    [
        RSAKey.generate_key(2048, parameters={"kid": "test-signing-key"}),  # forged: same kid, other key
        RSAKey.generate_key(2048, parameters={"kid": "unknown-key"}),
        OctKey.import_key("a-test-client-secret-that-is-long-enough-for-hs256-0123456789"),  # alg confusion
    ],
    ids=["forged-same-kid", "unknown-kid", "hs256-with-client-secret"],
)
def test_forged_signatures_are_refused(provider, key) -> None:
    config = oidc.current_config()
    with pytest.raises(oidc.OidcError, match=r"signature|key"):
        oidc.verify_id_token(config, _token(provider, key), nonce="n1")


def test_an_unsigned_token_is_refused(provider) -> None:
    header = "eyJhbGciOiJub25lIn0"  # {"alg":"none"}
    payload = jwt.encode({"alg": "RS256"}, {"sub": "alice"}, provider.signing_key).split(".")[1]
    with pytest.raises(oidc.OidcError, match="signature"):
        oidc.verify_id_token(oidc.current_config(), f"{header}.{payload}.", nonce=None)


def test_logout_ends_the_console_session_and_the_provider_session(provider) -> None:
    browser = requests.Session()  # the provider's cookies, as a browser keeps them
    client = APIClient()
    sign_in(client, provider, browser=browser)

    answer = client.post("/api/v1/auth/logout/")

    assert answer.status_code == 200
    end_session = answer.json()["end_session_url"]
    assert end_session.startswith(f"{provider.issuer}/session/end?")
    query = parse_qs(urlsplit(end_session).query)
    assert query["post_logout_redirect_uri"] == [f"{BASE}/login"]
    assert query["id_token_hint"][0]
    assert client.get("/api/v1/auth/session/").json()["authenticated"] is False
    # At the provider: confirm, and be sent back to the console's login page.
    assert (
        follow_provider(end_session, f"{BASE}/login", form={"logout": "yes"}, session=browser)
        == f"{BASE}/login"
    )
    # The provider's session is gone: signing in again asks for the password again.
    again = client.get("/api/v1/auth/oidc/login/")
    page = browser.get(again["Location"], timeout=10)
    assert 'name="password"' in page.text


def _expire(client: APIClient) -> None:
    session = client.session
    session["oidc"]["expires_at"] = 0
    session.save()


def test_an_expired_sign_in_is_renewed_with_the_refresh_token_and_the_mapping_applied_again(provider) -> None:
    client = APIClient()
    sign_in(client, provider)
    first_refresh_token = client.session["oidc"]["refresh_token"]
    assert first_refresh_token
    provider.set_groups("alice", ["kafka-payments"])
    _expire(client)

    assert client.get("/api/v1/auth/session/").json()["authenticated"] is True

    assert memberships("alice") == {"payments": ("developer", True)}
    assert client.session["oidc"]["expires_at"] > time.time() + 60


def test_tokens_that_really_expire_at_the_provider_are_renewed_on_the_next_request(
    oidc_provider_factory, settings, acme
) -> None:
    provider = oidc_provider_factory([BASE], id_token_ttl=3, access_token_ttl=3)
    provider.set_user("alice", password=PASSWORD, groups=["kafka-payments", "kafka-billing"])
    sso_settings(settings, provider.issuer, RULES)
    client = APIClient()
    sign_in(client, provider)
    first = dict(client.session["oidc"])
    assert first["expires_at"] <= time.time() + 3
    provider.set_groups("alice", ["kafka-billing"])
    time.sleep(max(0.0, first["expires_at"] - time.time()) + 0.5)

    assert client.get("/api/v1/auth/session/").json()["authenticated"] is True

    renewed = client.session["oidc"]
    assert renewed["expires_at"] > first["expires_at"]
    assert renewed["id_token"] != first["id_token"]  # a new ID token, verified like the first
    assert memberships("alice") == {"billing": ("viewer", True)}


def test_an_expired_sign_in_ends_when_the_provider_cannot_renew_it(provider) -> None:
    client = APIClient()
    sign_in(client, provider)
    provider.stop()
    _expire(client)

    assert client.get("/api/v1/auth/session/").json()["authenticated"] is False
    assert client.get("/api/v1/teams/").status_code == 401


def test_a_deactivated_person_cannot_sign_in_with_the_provider(provider) -> None:
    sign_in(APIClient(), provider)
    get_user_model().objects.filter(username="alice").update(is_active=False)

    answer = sign_in(APIClient(), provider)

    assert answer["Location"].startswith("/login?sso_error=")
    assert "deactivated" in answer["Location"]


def test_an_issuer_on_a_loopback_address_is_refused_unless_the_operator_allows_it(provider, settings) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    oidc.forget_provider_metadata()

    answer = APIClient().get("/api/v1/auth/oidc/login/")

    assert answer.status_code == 302
    assert answer["Location"].startswith("/login?sso_error=")
    assert "refused" in answer["Location"]


def test_break_glass_admin_signs_in_while_the_provider_is_stopped(provider, settings) -> None:
    user_model = get_user_model()
    user_model.objects.create_superuser("root", "root@example.com", "break glass password 42")
    user_model.objects.create_user("bob", "bob@example.com", "bob's local password 42")
    settings.OIDC_HIDE_LOCAL_LOGIN = True
    settings.OIDC_BREAK_GLASS_USERS = ["root"]
    provider.stop()
    options = APIClient().get("/api/v1/auth/options/").json()
    assert options == {
        "sso": {"name": "Test IdP", "login_url": "/api/v1/auth/oidc/login/"},
        "local_login": False,
    }

    # The provider is down: single sign-on says so; people are not left with a server error.
    down = APIClient().get("/api/v1/auth/oidc/login/")
    assert down.status_code == 302
    assert "could+not+be+reached" in down["Location"]
    # Other local accounts are refused with local login hidden; the break-glass one is not.
    bob = APIClient().post(
        "/api/v1/auth/login/", {"username": "bob", "password": "bob's local password 42"}, format="json"
    )
    assert bob.status_code == 403
    assert bob.json()["error"]["code"] == "local_login_disabled"
    admin = APIClient()
    answer = admin.post(
        "/api/v1/auth/login/", {"username": "root", "password": "break glass password 42"}, format="json"
    )
    assert answer.status_code == 200, answer.content
    assert admin.get("/api/v1/auth/session/").json()["user"]["username"] == "root"
    assert admin.get("/api/v1/people/").status_code == 200


API_AUDIENCE = "urn:streamhub:api"


def script_access_token(provider, *, resource: str = API_AUDIENCE) -> dict:
    """What a person's script does: its own authorization code flow with PKCE at the provider, asking for an
    access token for the API (`resource`, RFC 8707). Returns the token response."""
    verifier = "a-code-verifier-of-the-script-that-is-long-enough-0123456789"
    challenge = oidc.create_s256_code_challenge(verifier)
    authorization = oidc.prepare_grant_uri(
        f"{provider.issuer}/auth",
        CLIENT_ID,
        "code",
        redirect_uri=f"{BASE}{REDIRECT_PATH}",
        scope="openid api",
        state="script-state",
        code_challenge=challenge,
        code_challenge_method="S256",
        resource=resource,
    )
    back = follow_provider(
        authorization, f"{BASE}{REDIRECT_PATH}", form={"login": "alice", "password": PASSWORD}
    )
    code = parse_qs(urlsplit(back).query)["code"][0]
    response = requests.post(
        f"{provider.issuer}/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": f"{BASE}{REDIRECT_PATH}",
            "code_verifier": verifier,
            "resource": resource,
        },
        auth=(CLIENT_ID, CLIENT_SECRET),
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def api_audience(provider, settings) -> str:
    settings.OIDC_API_AUDIENCE = API_AUDIENCE
    return API_AUDIENCE


def test_a_script_calls_the_api_with_the_provider_s_access_token_as_the_person(
    provider, api_audience
) -> None:
    token = script_access_token(provider)["access_token"]
    assert token.count(".") == 2  # a JWT access token (RFC 9068) for the API's audience

    before = bearer(token).get("/api/v1/teams/")
    assert before.status_code == 401
    assert "sign in to the console once" in before.json()["error"]["message"]

    sign_in(APIClient(), provider)  # the person exists now, with the mapped teams
    client = bearer(token)
    teams = client.get("/api/v1/teams/")
    assert teams.status_code == 200
    assert sorted(team["name"] for team in teams.json()["results"]) == ["billing", "payments"]
    payments = Team.objects.get(name="payments")
    created = client.post(
        "/api/v1/service-accounts/", {"team": payments.id, "name": "alice-script"}, format="json"
    )
    assert created.status_code == 201, created.content
    event = AuditEvent.objects.get(action="service_account.create")
    assert (event.actor_name, event.via) == ("alice", "access_token")


def test_access_tokens_with_a_wrong_audience_forged_or_expired_and_id_tokens_are_refused(
    provider, api_audience, settings
) -> None:
    sign_in(APIClient(), provider)
    now = int(time.time())
    claims = {"iss": provider.issuer, "aud": API_AUDIENCE, "sub": "alice", "iat": now, "exp": now + 300}
    good = jwt.encode(
        {"alg": "RS256", "kid": "test-signing-key", "typ": "at+jwt"}, claims, provider.signing_key
    )
    assert bearer(good).get("/api/v1/teams/").status_code == 200  # the same shape, correctly made, passes

    forged_key = RSAKey.generate_key(2048, parameters={"kid": "test-signing-key"})
    refused = {
        "wrong audience": jwt.encode({"alg": "RS256"}, {**claims, "aud": CLIENT_ID}, provider.signing_key),
        "forged": jwt.encode({"alg": "RS256", "kid": "test-signing-key"}, claims, forged_key),
        "expired": jwt.encode({"alg": "RS256"}, {**claims, "exp": now - 120}, provider.signing_key),
        "id token": jwt.encode({"alg": "RS256"}, {**claims, "nonce": "n"}, provider.signing_key),
    }
    for what, token in refused.items():
        answer = bearer(token).get("/api/v1/teams/")
        assert answer.status_code == 401, what
        assert answer.json()["error"]["code"] == "invalid_token", what
    # The real ID token of a console sign-in is not an access token for the API either.
    client = APIClient()
    sign_in(client, provider)
    assert bearer(client.session["oidc"]["id_token"]).get("/api/v1/teams/").status_code == 401
    # Off unless configured: the provider's tokens are then not accepted at all.
    settings.OIDC_API_AUDIENCE = ""
    assert bearer(good).get("/api/v1/teams/").status_code == 401
