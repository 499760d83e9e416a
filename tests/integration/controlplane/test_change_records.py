"""The seam through which every change is recorded (controlplane.core.changes): the services announce, the audit
app writes. Tenancy's changes and the scoped API's refusals reach the audit log without importing it, and with no
audit log connected a change is refused rather than made unrecorded."""

from collections.abc import Iterator

import pytest
from django.core.exceptions import ImproperlyConfigured

from controlplane.audit.choices import Result
from controlplane.audit.models import AuditEvent
from controlplane.audit.services import log_change
from controlplane.core.changes import Change, audited_change, change_recorded
from controlplane.core.errors import Unavailable
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor, Credentials
from controlplane.tenancy.models import Organization

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SYSTEM = Actor.system()


@pytest.fixture
def no_audit_log() -> Iterator[None]:
    assert change_recorded.disconnect(dispatch_uid="audit.log_change")
    try:
        yield
    finally:
        change_recorded.connect(log_change, dispatch_uid="audit.log_change")


def test_tenancy_records_its_changes_through_the_seam() -> None:
    organization = tenancy.create_organization(actor=SYSTEM, name="Acme")

    event = AuditEvent.objects.get(action="organization.create")
    assert (event.result, event.resource_id, event.actor_name) == (
        Result.SUCCESS,
        str(organization.id),
        "system",
    )


def test_a_refusal_is_recorded_with_its_own_result_after_the_change_is_rolled_back() -> None:
    class NoAnswer(Unavailable):
        audit_result = Result.UNKNOWN

    def half_made_change() -> None:
        with audited_change(
            actor=SYSTEM, change=Change(action="organization.create", resource_type="organization")
        ):
            Organization.objects.create(name="Half", slug="half")
            raise NoAnswer("The cluster did not answer.")

    with pytest.raises(NoAnswer):
        half_made_change()

    assert not Organization.objects.filter(slug="half").exists()
    event = AuditEvent.objects.get()
    assert (event.result, event.reason) == (Result.UNKNOWN, "The cluster did not answer.")


def test_a_change_nobody_would_record_is_not_made(no_audit_log: None) -> None:
    with pytest.raises(ImproperlyConfigured, match=r"controlplane\.audit"):
        tenancy.create_organization(actor=SYSTEM, name="Unrecorded")

    assert not Organization.objects.filter(name="Unrecorded").exists()


def test_a_refused_write_through_the_api_is_recorded(world) -> None:
    response = world.team_a_viewer.client().post(
        "/api/v1/service-accounts/", {"team": world.team_a.id, "name": "sneaky"}, format="json"
    )

    assert response.status_code == 403
    event = AuditEvent.objects.filter(result=Result.FAILURE).latest("id")
    assert (event.action, event.actor_name, event.via) == ("serviceaccount.create", "vera", "api_key")


def test_the_api_authentication_credentials_say_how_their_caller_acts(world) -> None:
    key = world.team_a_viewer.api_key

    actor = key.actor(object(), "10.0.0.1")
    assert isinstance(key, Credentials)
    assert (actor.user, actor.api_key, actor.client_address, actor.via) == (
        key.user,
        key,
        "10.0.0.1",
        "api_key",
    )
