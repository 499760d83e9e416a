"""A change answered within the request: a refusal is a refusal; no answer is read back before anything is
concluded, and what the read-back shows is what is recorded."""

import pytest

from controlplane.audit.choices import Result
from controlplane.clusters.outcomes import OutcomeUnknown, confirmed_change, is_ambiguous
from controlplane.core.api.errors import http_status
from controlplane.core.errors import Conflict, ServiceError
from controlplane.kafka.errors import ClusterUnreachable, KafkaGatewayError


def test_a_timeout_the_read_back_shows_applied_counts_as_done() -> None:
    looked: list[str] = []

    with confirmed_change(lambda: looked.append("read back") or True):
        raise ClusterUnreachable("_TIMED_OUT", "CreateAcls got no answer")

    assert looked == ["read back"]


def test_a_timeout_the_read_back_does_not_show_is_an_unknown_outcome_not_a_failure() -> None:
    with pytest.raises(OutcomeUnknown) as raised, confirmed_change(lambda: False):
        raise KafkaGatewayError("REQUEST_TIMED_OUT", "the controller did not finish in time")

    assert http_status(raised.value) == 503
    assert raised.value.code == "outcome_unknown"
    assert raised.value.audit_result == Result.UNKNOWN


def test_an_unreadable_cluster_after_a_timeout_is_an_unknown_outcome() -> None:
    def unreadable() -> bool:
        raise ClusterUnreachable("_TRANSPORT", "connection refused")

    with pytest.raises(OutcomeUnknown), confirmed_change(unreadable):
        raise ClusterUnreachable("_TIMED_OUT", "no answer")


def test_a_refusal_is_a_refusal_and_nothing_is_read_back() -> None:
    def never() -> bool:
        raise AssertionError("a refusal needs no read-back")

    with pytest.raises(Conflict) as raised, confirmed_change(never):
        raise KafkaGatewayError("TOPIC_ALREADY_EXISTS", "exists")

    assert raised.value.code == "duplicate"
    assert isinstance(raised.value, ServiceError)


def test_only_no_answer_is_ambiguous() -> None:
    assert is_ambiguous(ClusterUnreachable("_TRANSPORT", ""))
    assert is_ambiguous(KafkaGatewayError("REQUEST_TIMED_OUT", ""))
    assert not is_ambiguous(KafkaGatewayError("INVALID_REPLICATION_FACTOR", ""))
    assert not is_ambiguous(KafkaGatewayError("POLICY_VIOLATION", ""))
