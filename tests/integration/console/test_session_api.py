import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def csrf_client() -> APIClient:
    return APIClient(enforce_csrf_checks=True)


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", "alice@example.com", "correct horse battery")


def _csrf_token(client: APIClient) -> str:
    response = client.get("/api/v1/auth/session/")
    assert response.status_code == 200
    return response.cookies["csrftoken"].value


def test_it_reports_an_anonymous_session_and_sets_the_csrf_cookie(csrf_client) -> None:
    response = csrf_client.get("/api/v1/auth/session/")

    assert response.json() == {"authenticated": False, "user": None}
    assert "csrftoken" in response.cookies


def test_it_logs_in_and_out_with_a_session(csrf_client, alice) -> None:
    token = _csrf_token(csrf_client)

    login = csrf_client.post(
        "/api/v1/auth/login/",
        {"username": "alice", "password": "correct horse battery"},
        format="json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert login.status_code == 200
    assert login.json()["user"]["username"] == "alice"
    assert csrf_client.get("/api/v1/auth/session/").json()["authenticated"] is True

    token = csrf_client.cookies["csrftoken"].value  # rotated on login
    logout = csrf_client.post("/api/v1/auth/logout/", HTTP_X_CSRFTOKEN=token)
    assert logout.status_code == 200
    assert logout.json() == {"end_session_url": None}  # a password session: no provider to sign out of
    assert csrf_client.get("/api/v1/auth/session/").json()["authenticated"] is False


def test_it_refuses_a_wrong_password_with_the_error_shape(csrf_client, alice) -> None:
    token = _csrf_token(csrf_client)

    response = csrf_client.post(
        "/api/v1/auth/login/",
        {"username": "alice", "password": "nope"},
        format="json",
        HTTP_X_CSRFTOKEN=token,
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_credentials"
    assert "nope" not in response.content.decode()


def test_it_refuses_a_login_without_the_csrf_token(csrf_client, alice) -> None:
    response = csrf_client.post(
        "/api/v1/auth/login/", {"username": "alice", "password": "correct horse battery"}, format="json"
    )

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"


def test_it_hides_the_overview_from_anonymous_users(csrf_client) -> None:
    response = csrf_client.get("/api/v1/overview/")

    assert response.status_code == 401
    assert set(response.json()["error"]) == {"code", "message", "details", "request_id"}


def test_it_rejects_an_invalid_login_payload_with_field_details(csrf_client) -> None:
    token = _csrf_token(csrf_client)

    response = csrf_client.post(
        "/api/v1/auth/login/", {"username": ""}, format="json", HTTP_X_CSRFTOKEN=token
    )

    assert response.status_code == 400
    body = response.json()["error"]
    assert body["code"] == "invalid"
    assert set(body["details"]) == {"username", "password"}
