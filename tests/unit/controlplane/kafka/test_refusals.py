import pytest

from broker.wire.schemas import response_class
from controlplane.core.api.errors import http_status
from controlplane.core.errors import Conflict
from controlplane.kafka.errors import ClusterUnreachable, KafkaGatewayError
from controlplane.kafka.messages import decode_text
from controlplane.kafka.reader import Record
from controlplane.kafka.refusals import kafka_refusals, refusal_for
from controlplane.topics.browsing import SimpleFilter as MessageFilter


def _message(key: bytes | None, value: bytes | None, headers=()) -> Record:
    return Record(partition=0, offset=0, timestamp_ms=0, key=key, value=value, headers=list(headers))


def test_payloads_are_text_when_valid_utf8_and_base64_otherwise() -> None:
    assert decode_text("grüße".encode()) == ("grüße", "utf-8")
    assert decode_text(b"\x00\xff") == ("AP8=", "base64")
    assert decode_text(None) == (None, "null")


def test_message_filters_match_key_value_and_header_names() -> None:
    message = _message(b"order-17", b'{"total": 3}', [("trace", b"abc")])

    assert MessageFilter(key_contains="17")(message)
    assert not MessageFilter(key_contains="18")(message)
    assert MessageFilter(value_contains="total", header_key="trace")(message)
    assert not MessageFilter(header_key="missing")(message)
    assert not MessageFilter(key_contains="x")(_message(None, b"x"))


def test_kafka_errors_become_explained_refusals() -> None:
    duplicate = refusal_for(KafkaGatewayError("TOPIC_ALREADY_EXISTS", "exists"))
    assert isinstance(duplicate, Conflict)
    assert duplicate.details["kafka_error"] == "TOPIC_ALREADY_EXISTS"
    unreachable = refusal_for(ClusterUnreachable("_TRANSPORT", "refused"))
    assert http_status(unreachable) == 400
    assert unreachable.code == "cluster_unreachable"
    unknown = refusal_for(KafkaGatewayError("SOMETHING_NEW", "?"))
    assert "SOMETHING_NEW" in unknown.message
    with pytest.raises(Conflict), kafka_refusals():
        raise KafkaGatewayError("NON_EMPTY_GROUP", "members")


def test_the_protocol_client_finds_each_requests_response_class() -> None:
    from kio.schema.describe_client_quotas.v1.request import DescribeClientQuotasRequest
    from kio.schema.describe_client_quotas.v1.response import DescribeClientQuotasResponse

    request = DescribeClientQuotasRequest(components=(), strict=False)
    assert response_class(int(request.__api_key__), int(request.__version__)) is DescribeClientQuotasResponse
