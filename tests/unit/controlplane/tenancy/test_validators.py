import pytest
from django.core.exceptions import ValidationError

from controlplane.accounts.validators import validate_service_account_name
from controlplane.tenancy.validators import (
    find_overlap,
    validate_naming_pattern,
    validate_prefix,
    validate_topic_config_names,
)


@pytest.mark.parametrize(
    ("new", "owned", "clash"),
    [
        ("payments.", ["search."], None),
        ("pay", ["payments."], "payments."),  # the new prefix would swallow another team's
        ("payments.cards.", ["payments."], "payments."),  # the new prefix sits inside another team's
        ("payments.", ["payments."], "payments."),
        ("payments-", ["payments."], None),
    ],
)
def test_it_finds_prefixes_that_overlap_in_either_direction(
    new: str, owned: list[str], clash: str | None
) -> None:
    assert find_overlap(new, owned) == clash


@pytest.mark.parametrize(
    ("resource_type", "prefix"),
    [
        ("topic", "payments."),
        ("subject", "payments-value"),
        ("group", "payments:consumers/"),
        ("transactional_id", "tx@1"),
    ],
)
def test_it_accepts_prefixes_kafka_would_accept(resource_type: str, prefix: str) -> None:
    validate_prefix(resource_type, prefix)


@pytest.mark.parametrize(
    ("resource_type", "prefix"),
    [
        ("topic", ""),
        ("topic", "pay ments"),
        ("topic", "payments/"),
        ("group", "a b"),
        ("group", "x\n"),
        ("topic", "a" * 250),
    ],
)
def test_it_rejects_prefixes_with_characters_kafka_would_refuse(resource_type: str, prefix: str) -> None:
    with pytest.raises(ValidationError):
        validate_prefix(resource_type, prefix)


@pytest.mark.parametrize("name", ["payments-api", "a", "svc.orders_v2", "A" * 64])
def test_it_accepts_service_account_names_that_are_valid_principals(name: str) -> None:
    validate_service_account_name(name)


@pytest.mark.parametrize("name", ["", "-leading", "with space", "a,b", "a=b", "User:x", "a" * 65, "ünï"])
def test_it_rejects_service_account_names_scram_or_acls_would_mangle(name: str) -> None:
    with pytest.raises(ValidationError):
        validate_service_account_name(name)


def test_it_rejects_a_naming_pattern_that_is_not_a_regular_expression() -> None:
    validate_naming_pattern(r"payments\.[a-z]+")
    with pytest.raises(ValidationError):
        validate_naming_pattern("payments.(")


def test_it_accepts_a_list_of_config_names_or_none() -> None:
    validate_topic_config_names(None)
    validate_topic_config_names(["retention.ms"])
    with pytest.raises(ValidationError):
        validate_topic_config_names("retention.ms")
    with pytest.raises(ValidationError):
        validate_topic_config_names([" "])
