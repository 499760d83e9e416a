"""The topic policy check is pure: it is given a policy and prefixes, and explains every violation."""

from controlplane.tenancy.guardrails import DEFAULT_LIMITS, effective_limits
from controlplane.tenancy.models import TeamPolicy
from controlplane.tenancy.policy import evaluate_topic_request


def _codes(**overrides) -> list[str]:
    request = {
        "policy": TeamPolicy(),
        "topic_prefixes": ["payments."],
        "name": "payments.orders",
        "partitions": 3,
        "configs": {},
        "existing_partitions": 0,
    }
    request.update(overrides)
    return [violation.code for violation in evaluate_topic_request(**request)]


def test_it_accepts_a_request_inside_the_prefixes_when_the_policy_has_no_limits() -> None:
    assert _codes() == []


def test_it_rejects_a_name_outside_the_teams_prefixes() -> None:
    assert _codes(name="search.orders") == ["name_outside_prefixes"]


def test_it_rejects_a_topic_named_exactly_the_teams_prefix() -> None:
    assert _codes(name="payments.") == ["name_is_prefix"]
    assert _codes(name="payments.o") == []


def test_it_rejects_every_name_when_the_team_owns_no_prefix() -> None:
    assert _codes(topic_prefixes=[]) == ["name_outside_prefixes"]


def test_it_enforces_the_naming_pattern_on_the_whole_name() -> None:
    policy = TeamPolicy(naming_pattern=r"payments\.[a-z]+")

    assert _codes(policy=policy) == []
    assert _codes(policy=policy, name="payments.orders-v2") == ["name_pattern"]


def test_it_caps_partitions_per_topic() -> None:
    policy = TeamPolicy(max_partitions_per_topic=6)

    assert _codes(policy=policy, partitions=6) == []
    assert _codes(policy=policy, partitions=7) == ["too_many_partitions"]


def test_it_counts_the_teams_existing_partitions_against_its_total() -> None:
    policy = TeamPolicy(max_total_partitions=10)

    assert _codes(policy=policy, partitions=4, existing_partitions=6) == []
    assert _codes(policy=policy, partitions=5, existing_partitions=6) == ["total_partitions_exceeded"]


def test_it_allows_only_the_listed_topic_configs() -> None:
    policy = TeamPolicy(allowed_topic_configs=["cleanup.policy"])

    assert _codes(policy=policy, configs={"cleanup.policy": "compact"}) == []
    assert _codes(policy=policy, configs={"segment.bytes": "1048576", "cleanup.policy": "delete"}) == [
        "config_not_allowed"
    ]


def test_an_empty_allow_list_forbids_every_config() -> None:
    assert _codes(policy=TeamPolicy(allowed_topic_configs=[]), configs={"retention.ms": "1"}) == [
        "config_not_allowed"
    ]


def test_it_caps_retention_and_treats_infinite_retention_as_too_long() -> None:
    policy = TeamPolicy(max_retention_ms=86_400_000)

    assert _codes(policy=policy, configs={"retention.ms": "3600000"}) == []
    assert _codes(policy=policy, configs={"retention.ms": "86400001"}) == ["retention_too_long"]
    assert _codes(policy=policy, configs={"retention.ms": "-1"}) == ["retention_too_long"]
    assert _codes(policy=policy, configs={"retention.ms": "a week"}) == ["invalid_config_value"]


def test_it_reports_all_violations_at_once_with_the_field_they_concern() -> None:
    policy = TeamPolicy(max_partitions_per_topic=1, naming_pattern=r"[a-z.]+")

    violations = evaluate_topic_request(
        policy=policy, topic_prefixes=["payments."], name="Other", partitions=2, configs={}
    )

    assert {(violation.code, violation.field) for violation in violations} == {
        ("name_outside_prefixes", "name"),
        ("name_pattern", "name"),
        ("too_many_partitions", "partitions"),
    }
    assert all(violation.message for violation in violations)


def test_an_empty_policy_still_has_the_guardrail_defaults() -> None:
    assert _codes(partitions=1000) == []
    assert _codes(partitions=10_000) == ["too_many_partitions", "total_partitions_exceeded"]
    assert _codes(partitions=500, existing_partitions=2600) == ["total_partitions_exceeded"]
    assert _codes(replication_factor=5) == []
    assert _codes(replication_factor=6) == ["replication_factor_too_high"]
    assert _codes(configs={"retention.ms": str(30 * 24 * 3600 * 1000)}) == []
    assert _codes(configs={"retention.ms": str(31 * 24 * 3600 * 1000)}) == ["retention_too_long"]
    assert _codes(configs={"retention.ms": "-1"}) == ["retention_too_long"]


def test_segments_stay_within_bounds() -> None:
    assert _codes(configs={"segment.bytes": str(1024 * 1024), "segment.ms": "600000"}) == []
    assert _codes(configs={"segment.bytes": "1024"}) == ["segment_size_out_of_bounds"]
    assert _codes(configs={"segment.bytes": str(2 * 1024**3)}) == ["segment_size_out_of_bounds"]
    assert _codes(configs={"segment.ms": "1000"}) == ["segment_time_too_short"]
    assert _codes(configs={"segment.ms": "soon"}) == ["invalid_config_value"]


def test_an_org_admin_raises_a_limit_by_setting_it_in_the_policy() -> None:
    policy = TeamPolicy(
        max_partitions_per_topic=10_000, max_total_partitions=20_000, max_replication_factor=7
    )

    assert _codes(policy=policy, partitions=10_000, replication_factor=7) == []
    assert effective_limits(policy).max_retention_ms == DEFAULT_LIMITS.max_retention_ms
