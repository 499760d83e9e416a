"""People through the API: invitations and password resets by one-time link, creation with a password,
deactivation, team roles, who may do it, and the audit trail of each."""

from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from rest_framework.test import APIClient

from controlplane.audit.models import AuditEvent
from controlplane.people.models import PasswordLink
from controlplane.people.services import hash_token

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

NEW_PASSWORD = "correct horse battery staple"


def _token(url: str) -> str:
    parts = urlsplit(url)
    assert parts.path == "/set-password"
    assert parts.fragment.startswith("token=")
    return parts.fragment.removeprefix("token=")


def _invite(world, username: str = "nina", **extra) -> dict:
    body = {
        "organization": world.organization.id,
        "username": username,
        "email": f"{username}@example.com",
        "teams": [{"team": world.team_b.id, "role": "developer"}],
        **extra,
    }
    response = world.org_admin.session().post("/api/v1/people/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def _anonymous() -> APIClient:
    return APIClient(enforce_csrf_checks=True)


def _use(
    token: str, password: str = NEW_PASSWORD, client: APIClient | None = None
) -> tuple[int, dict | None]:
    client = client or _anonymous()
    client.get("/api/v1/auth/session/")  # the CSRF cookie, as the console gets it
    csrf = client.cookies["csrftoken"].value
    response = client.post(
        "/api/v1/auth/password-links/use/",
        {"token": token, "password": password},
        format="json",
        HTTP_X_CSRFTOKEN=csrf,
    )
    return response.status_code, (response.json() if response.content else None)


def _login(username: str, password: str) -> int:
    client = APIClient()
    return client.post(
        "/api/v1/auth/login/", {"username": username, "password": password}, format="json"
    ).status_code


def test_an_invited_person_sets_a_password_once_and_signs_in_seeing_only_their_team(world, settings) -> None:
    # The default backend writes mail to the log: the link must not go there, so it is not sent.
    settings.EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    created = _invite(world)

    person, link = created["person"], created["link"]
    assert person["status"] == "invited"
    assert person["identity_source"] == "local"
    assert [(team["team_name"], team["role"]) for team in person["teams"]] == [("Search", "developer")]
    assert link["purpose"] == "invite"
    assert link["emailed"] is False
    token = _token(link["url"])
    # Only the hash is kept.
    stored = PasswordLink.objects.get(user_id=person["id"])
    assert stored.token_hash == hash_token(token)
    assert token not in stored.token_hash
    assert _login("nina", NEW_PASSWORD) == 400

    inspect = _anonymous()
    inspect.get("/api/v1/auth/session/")
    info = inspect.post(
        "/api/v1/auth/password-links/inspect/",
        {"token": token},
        format="json",
        HTTP_X_CSRFTOKEN=inspect.cookies["csrftoken"].value,
    )
    assert info.status_code == 200
    assert info.json()["username"] == "nina"
    assert info.json()["purpose"] == "invite"

    assert _use(token, "short")[0] == 400
    browser = _anonymous()
    assert _use(token, client=browser) == (204, None)
    # The browser that set the password is signed in: no second sign-in by hand.
    session = browser.get("/api/v1/auth/session/").json()
    assert session["authenticated"] is True
    assert session["user"]["username"] == "nina"
    assert _login("nina", NEW_PASSWORD) == 200
    # The link is spent.
    status, body = _use(token, "another long password 123")
    assert status == 400
    assert body["error"]["code"] == "invalid_link"

    nina = APIClient()
    nina.force_login(get_user_model().objects.get(username="nina"))
    topics_teams = {team["name"] for team in nina.get("/api/v1/teams/").json()["results"]}
    assert topics_teams == {"Search"}
    assert nina.get(f"/api/v1/teams/{world.team_a.id}/").status_code == 404
    assert nina.get("/api/v1/people/").json()["results"] == []  # not an org admin

    actions = list(
        AuditEvent.objects.filter(resource_name="nina")
        .order_by("id")
        .values_list("action", "actor_name", "result")
    )
    assert actions == [
        ("user.invite", "olga", "success"),
        ("user.accept_invite", "nina", "failure"),  # the short password
        ("user.accept_invite", "nina", "success"),
    ]
    invite_event = AuditEvent.objects.get(action="user.invite")
    assert token not in str(invite_event.after)


def test_a_person_created_with_a_password_signs_in_at_once(world) -> None:
    created = _invite(world, "paul", password=NEW_PASSWORD)

    assert created["link"] is None
    assert created["person"]["status"] == "active"
    assert _login("paul", NEW_PASSWORD) == 200
    assert AuditEvent.objects.filter(action="user.create", resource_name="paul", result="success").exists()


def test_a_weak_password_is_refused_and_nobody_is_created(world) -> None:
    response = world.org_admin.session().post(
        "/api/v1/people/",
        {"organization": world.organization.id, "username": "weak", "password": "123"},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "weak_password"
    assert not get_user_model().objects.filter(username="weak").exists()


def test_deactivation_ends_sessions_and_keys_and_reactivation_restores_them(world) -> None:
    dave = world.team_a_developer
    session = dave.session()
    assert session.get("/api/v1/teams/").status_code == 200
    admin = world.org_admin.session()

    response = admin.post(f"/api/v1/people/{dave.user.id}/deactivate/")

    assert response.status_code == 200
    assert response.json()["status"] == "deactivated"
    assert session.get("/api/v1/teams/").status_code in (401, 403)
    assert dave.client().get("/api/v1/teams/").status_code == 401
    assert _login("dave", "a long test password") == 400
    assert admin.post(f"/api/v1/people/{dave.user.id}/password-link/").status_code == 409

    assert admin.post(f"/api/v1/people/{dave.user.id}/reactivate/").json()["status"] == "active"
    assert dave.client().get("/api/v1/teams/").status_code == 200
    assert list(
        AuditEvent.objects.filter(resource_name="dave", action__startswith="user.")
        .order_by("id")
        .values_list("action", "result")
    ) == [
        ("user.deactivate", "success"),
        ("user.reset_link", "failure"),
        ("user.reactivate", "success"),
    ]


def test_a_reset_link_replaces_the_password_and_voids_earlier_links(world) -> None:
    admin = world.org_admin.session()
    first = admin.post(f"/api/v1/people/{world.team_a_viewer.user.id}/password-link/").json()
    second = admin.post(f"/api/v1/people/{world.team_a_viewer.user.id}/password-link/").json()
    assert first["purpose"] == second["purpose"] == "reset"

    # The old password works until the link is used; the first link died when the second was made.
    assert _login("vera", "a long test password") == 200
    assert _use(_token(first["url"]))[0] == 400
    assert _use(_token(second["url"])) == (204, None)
    assert _login("vera", "a long test password") == 400
    assert _login("vera", NEW_PASSWORD) == 200
    assert AuditEvent.objects.filter(action="user.reset_password", actor_name="vera").exists()


def test_an_expired_link_is_refused(world) -> None:
    link = _invite(world)["link"]
    PasswordLink.objects.update(expires_at="2000-01-01T00:00:00Z")

    status, body = _use(_token(link["url"]))

    assert status == 400
    assert body["error"]["code"] == "invalid_link"


def test_the_link_is_emailed_when_a_mail_backend_is_configured(
    world, settings, django_capture_on_commit_callbacks
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"

    with django_capture_on_commit_callbacks(execute=True):  # sent once the person is committed
        link = _invite(world, "mira")["link"]

    assert link["emailed"] is True
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["mira@example.com"]
    assert link["url"] in mail.outbox[0].body


@pytest.mark.parametrize("persona", ["team_a_admin", "team_a_developer", "team_b_admin", "outsider"])
def test_only_org_admins_manage_people(world, persona: str) -> None:
    client = getattr(world, persona).session()
    target = world.team_a_viewer.user

    # Otto administers another organization: he sees its people (himself), none of Acme's.
    listed = {row["username"] for row in client.get("/api/v1/people/").json()["results"]}
    assert listed == ({"otto"} if persona == "outsider" else set())
    assert client.post(f"/api/v1/people/{target.id}/deactivate/").status_code == 404
    create = client.post(
        "/api/v1/people/",
        {"organization": world.organization.id, "username": "sneaky"},
        format="json",
    )
    assert create.status_code in (403, 404)  # another organization's id names nothing for them
    assert not get_user_model().objects.filter(username="sneaky").exists()
    target.refresh_from_db()
    assert target.is_active


def test_an_org_admin_cannot_deactivate_someone_of_another_organization_too(world) -> None:
    # Otto administers Globex; he also becomes a plain member of Acme.
    from controlplane.tenancy import services as tenancy
    from controlplane.tenancy.access import Actor

    tenancy.add_org_member(
        actor=Actor.system(), organization=world.organization, user=world.outsider.user, is_org_admin=False
    )
    admin = world.org_admin.session()

    response = admin.post(f"/api/v1/people/{world.outsider.user.id}/deactivate/")

    assert response.status_code == 403
    assert admin.post(f"/api/v1/people/{world.org_admin.user.id}/deactivate/").status_code == 403


def test_a_viewer_api_key_of_an_org_admin_cannot_manage_people(world) -> None:
    from controlplane.accounts import services as accounts
    from controlplane.tenancy.access import Actor

    _, token = accounts.create_api_key(
        actor=Actor(user=world.org_admin.user), name="read only", role="viewer"
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    assert client.post(f"/api/v1/people/{world.team_a_viewer.user.id}/deactivate/").status_code in (403, 404)
    world.team_a_viewer.user.refresh_from_db()
    assert world.team_a_viewer.user.is_active


def test_people_list_shows_status_teams_and_open_links(world) -> None:
    _invite(world)

    rows = {
        row["username"]: row for row in world.org_admin.session().get("/api/v1/people/").json()["results"]
    }

    assert rows["nina"]["status"] == "invited"
    assert rows["nina"]["pending_link"]["purpose"] == "invite"
    assert rows["dave"]["status"] == "active"
    assert rows["dave"]["pending_link"] is None
    assert {team["team_name"] for team in rows["dave"]["teams"]} == {"Payments"}
    assert "otto" not in rows  # another organization's
    invited = world.org_admin.session().get("/api/v1/people/?status=invited").json()["results"]
    assert [row["username"] for row in invited] == ["nina"]
