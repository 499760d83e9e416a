import pytest

from controlplane.core.errors import ServiceError
from controlplane.quotas.choices import entity_key
from controlplane.quotas.services import validate_entity, validate_values


def test_entity_keys_name_defaults_and_keep_a_stable_order() -> None:
    assert entity_key({"client-id": "app", "user": "svc"}) == "user=svc,client-id=app"
    assert entity_key({"user": None}) == "user=<default>"
    assert entity_key({"client-id": None}) == "client-id=<default>"


@pytest.mark.parametrize("entity", [{}, {"ip": "1.2.3.4"}, {"user": ""}])
def test_it_refuses_entities_kafka_would_not_understand(entity: dict) -> None:
    with pytest.raises(ServiceError):
        validate_entity(entity)


def test_it_refuses_unknown_keys_and_non_positive_rates() -> None:
    with pytest.raises(ServiceError, match="Unknown quota key"):
        validate_values({"bytes_per_year": 1})
    with pytest.raises(ServiceError, match="must be positive"):
        validate_values({"producer_byte_rate": 0})
    validate_values({"producer_byte_rate": 1024, "consumer_byte_rate": None})
