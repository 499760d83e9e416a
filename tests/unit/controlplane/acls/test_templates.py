from controlplane.acls.templates import scope_problems, template_bindings
from controlplane.kafka.acls import Acl

PRINCIPAL = "User:payments-api"


def _ops(acls: list[Acl]) -> set[tuple[str, str, str]]:
    return {(acl.resource_type, acl.resource_name, acl.operation) for acl in acls}


def test_the_producer_template_writes_and_describes_topics_under_the_prefix() -> None:
    acls = template_bindings("producer", principal=PRINCIPAL, topic_prefix="payments.")

    assert _ops(acls) == {("TOPIC", "payments.", "WRITE"), ("TOPIC", "payments.", "DESCRIBE")}
    assert {(acl.pattern_type, acl.permission, acl.host, acl.principal) for acl in acls} == {
        ("PREFIXED", "ALLOW", "*", PRINCIPAL)
    }


def test_the_consumer_template_reads_topics_and_joins_groups_under_their_prefixes() -> None:
    acls = template_bindings(
        "consumer", principal=PRINCIPAL, topic_prefix="payments.", group_prefix="payments-"
    )

    assert _ops(acls) == {
        ("TOPIC", "payments.", "READ"),
        ("TOPIC", "payments.", "DESCRIBE"),
        ("GROUP", "payments-", "READ"),
    }


def test_the_share_consumer_template_grants_what_kafka_checks_for_a_share_group_member_and_no_more() -> None:
    acls = template_bindings(
        "share_consumer", principal=PRINCIPAL, topic_prefix="payments.", group_prefix="payments-queue-"
    )

    assert [(acl.resource_type, acl.resource_name, acl.operation) for acl in acls] == [
        ("TOPIC", "payments.", "READ"),
        ("TOPIC", "payments.", "DESCRIBE"),
        ("GROUP", "payments-queue-", "READ"),
    ]
    assert {(acl.pattern_type, acl.permission) for acl in acls} == {("PREFIXED", "ALLOW")}


def test_the_stream_app_template_adds_internal_topics_and_transactions() -> None:
    acls = template_bindings(
        "stream_app", principal=PRINCIPAL, topic_prefix="payments.", group_prefix="payments-"
    )

    assert ("TOPIC", "payments.", "CREATE") in _ops(acls)
    assert ("TRANSACTIONAL_ID", "payments-", "WRITE") in _ops(acls)
    assert ("GROUP", "payments-", "READ") in _ops(acls)


def test_the_transactional_producer_template_writes_topics_under_a_transactional_id_prefix() -> None:
    acls = template_bindings(
        "transactional_producer",
        principal=PRINCIPAL,
        topic_prefix="payments.",
        transactional_id_prefix="payments-tx-",
    )

    assert _ops(acls) == {
        ("TOPIC", "payments.", "WRITE"),
        ("TOPIC", "payments.", "DESCRIBE"),
        ("TRANSACTIONAL_ID", "payments-tx-", "WRITE"),
        ("TRANSACTIONAL_ID", "payments-tx-", "DESCRIBE"),
    }
    problems = scope_problems(
        acls,
        team_principals={PRINCIPAL},
        team_prefixes={"topic": ["payments."], "transactional_id": ["orders-tx-"]},
    )
    assert (
        problems == ["TRANSACTIONAL_ID 'payments-tx-' is outside the team's transactional_id prefixes."] * 2
    )


def test_a_stream_app_names_its_transactions_after_a_transactional_id_prefix_when_given_one() -> None:
    acls = template_bindings(
        "stream_app",
        principal=PRINCIPAL,
        topic_prefix="payments.",
        group_prefix="payments-",
        transactional_id_prefix="payments-tx-",
    )

    assert ("TRANSACTIONAL_ID", "payments-tx-", "WRITE") in _ops(acls)
    assert ("TRANSACTIONAL_ID", "payments-", "WRITE") not in _ops(acls)


def test_a_team_may_grant_its_own_accounts_inside_its_prefixes() -> None:
    acls = template_bindings(
        "consumer", principal=PRINCIPAL, topic_prefix="payments.orders", group_prefix="payments-"
    )

    problems = scope_problems(
        acls, team_principals={PRINCIPAL}, team_prefixes={"topic": ["payments."], "group": ["payments-"]}
    )

    assert problems == []


def test_it_explains_every_way_a_binding_leaves_the_teams_scope() -> None:
    acls = [
        Acl("TOPIC", "search.", "PREFIXED", PRINCIPAL, "*", "READ", "ALLOW"),
        Acl("TOPIC", "payments.x", "LITERAL", "User:someone-else", "*", "READ", "ALLOW"),
        Acl("BROKER", "kafka-cluster", "LITERAL", PRINCIPAL, "*", "ALTER", "ALLOW"),
        Acl("TOPIC", "*", "LITERAL", PRINCIPAL, "*", "READ", "ALLOW"),
        Acl("GROUP", "payments-", "PREFIXED", PRINCIPAL, "*", "READ", "ALLOW"),
    ]

    problems = scope_problems(acls, team_principals={PRINCIPAL}, team_prefixes={"topic": ["payments."]})

    assert len(problems) == 5
    assert "outside the team's topic prefixes" in problems[0]
    assert "not one of the team's service accounts" in problems[1]
    assert "Only org admins" in problems[2]
    assert "named resources only" in problems[3]
    assert "group prefixes" in problems[4]
