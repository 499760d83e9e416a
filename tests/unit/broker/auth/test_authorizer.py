"""ACL semantics of the authorizer, without sockets."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from broker.auth.authorizer import (
    AclBinding,
    AclFilter,
    Authorizer,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)
from broker.metadata.security_records import CreateAclRecord, DeleteAclRecord
from broker.metadata.security_registry import SecurityStore

ALICE = "User:alice"
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = Permission.ALLOW, Permission.DENY


def acl(
    name: str,
    operation: Operation,
    *,
    rtype: ResourceType = TOPIC,
    pattern: PatternType = LITERAL,
    principal: str = ALICE,
    host: str = "*",
    permission: Permission = ALLOW,
) -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, operation, permission)


@pytest.fixture
def store(tmp_path: Path) -> SecurityStore:
    security = SecurityStore(tmp_path)
    security.load()
    return security


def authorizer_with(store: SecurityStore, *bindings: AclBinding, **options: object) -> Authorizer:
    authorizer = Authorizer(
        store,
        super_users=options.get("super_users", ["User:admin"]),  # type: ignore[arg-type]
        allow_if_no_acl=bool(options.get("allow_if_no_acl", False)),
    )
    if bindings:
        store.apply_records([CreateAclRecord(b.as_tuple()) for b in bindings])
    return authorizer


def allowed(
    authorizer: Authorizer,
    operation: Operation,
    name: str,
    *,
    rtype: ResourceType = TOPIC,
    principal: str = ALICE,
    host: str = "10.0.0.1",
) -> bool:
    return authorizer.authorize(principal, host, operation, rtype, name)


def test_it_denies_everything_without_acls_by_default(store: SecurityStore) -> None:
    authorizer = authorizer_with(store)
    assert not allowed(authorizer, Operation.READ, "orders")


def test_allow_everyone_if_no_acl_found_allows_resources_without_acls_only(store: SecurityStore) -> None:
    authorizer = authorizer_with(
        store, acl("orders", Operation.READ, principal="User:bob"), allow_if_no_acl=True
    )
    assert allowed(authorizer, Operation.WRITE, "payments")
    assert not allowed(authorizer, Operation.READ, "orders")


def test_super_users_may_do_anything(store: SecurityStore) -> None:
    authorizer = authorizer_with(store, acl("orders", Operation.ALL, principal="User:admin", permission=DENY))
    assert allowed(authorizer, Operation.DELETE, "orders", principal="User:admin")


def test_literal_wildcard_and_prefixed_acls_match_their_names(store: SecurityStore) -> None:
    authorizer = authorizer_with(
        store,
        acl("orders", Operation.READ),
        acl("team-a.", Operation.WRITE, pattern=PREFIXED),
        acl("*", Operation.READ, rtype=GROUP),
    )
    assert allowed(authorizer, Operation.READ, "orders")
    assert not allowed(authorizer, Operation.READ, "orders2")
    assert allowed(authorizer, Operation.WRITE, "team-a.events")
    assert not allowed(authorizer, Operation.WRITE, "team-b.events")
    assert allowed(authorizer, Operation.READ, "any-group", rtype=GROUP)


def test_read_write_delete_and_alter_imply_describe_and_alter_configs_implies_describe_configs(
    store: SecurityStore,
) -> None:
    authorizer = authorizer_with(store, acl("r", Operation.READ), acl("ac", Operation.ALTER_CONFIGS))
    assert allowed(authorizer, Operation.DESCRIBE, "r")
    assert not allowed(authorizer, Operation.WRITE, "r")
    assert allowed(authorizer, Operation.DESCRIBE_CONFIGS, "ac")
    assert not allowed(authorizer, Operation.DESCRIBE, "ac")


def test_all_grants_every_operation(store: SecurityStore) -> None:
    authorizer = authorizer_with(store, acl("t", Operation.ALL))
    for operation in (Operation.READ, Operation.WRITE, Operation.DELETE, Operation.DESCRIBE_CONFIGS):
        assert allowed(authorizer, operation, "t")


def test_a_deny_wins_over_an_allow_but_only_for_its_operation(store: SecurityStore) -> None:
    authorizer = authorizer_with(
        store,
        acl("t", Operation.ALL, pattern=PREFIXED),
        acl("t-secret", Operation.READ, permission=DENY),
    )
    assert not allowed(authorizer, Operation.READ, "t-secret")
    assert allowed(authorizer, Operation.DESCRIBE, "t-secret")  # DENY READ leaves DESCRIBE
    assert allowed(authorizer, Operation.READ, "t-open")


def test_hosts_and_wildcard_principals_match(store: SecurityStore) -> None:
    authorizer = authorizer_with(
        store, acl("t", Operation.READ, host="10.0.0.1"), acl("u", Operation.READ, principal="User:*")
    )
    assert allowed(authorizer, Operation.READ, "t", host="10.0.0.1")
    assert not allowed(authorizer, Operation.READ, "t", host="10.0.0.2")
    assert allowed(authorizer, Operation.READ, "u", principal="User:carol")


def test_decisions_change_as_soon_as_acls_change(store: SecurityStore) -> None:
    authorizer = authorizer_with(store)
    assert not allowed(authorizer, Operation.READ, "t")  # cached
    binding = acl("t", Operation.READ)
    store.apply_records([CreateAclRecord(binding.as_tuple())])
    assert allowed(authorizer, Operation.READ, "t")
    store.apply_records([DeleteAclRecord(binding.as_tuple())])
    assert not allowed(authorizer, Operation.READ, "t")


def test_authorized_operations_are_a_bit_field_of_kafka_operation_codes(store: SecurityStore) -> None:
    authorizer = authorizer_with(store, acl("t", Operation.WRITE))
    bits = authorizer.authorized_operations(ALICE, "h", TOPIC, "t")
    assert bits == (1 << Operation.WRITE) | (1 << Operation.DESCRIBE)


def test_filters_match_like_kafka(store: SecurityStore) -> None:
    prefixed = acl("team-", Operation.READ, pattern=PREFIXED)
    literal = acl("team-x", Operation.WRITE)
    wildcard = acl("*", Operation.READ)
    other = acl("else", Operation.READ, rtype=GROUP)
    bindings = [prefixed, literal, wildcard, other]

    def matching(acl_filter: AclFilter) -> list[AclBinding]:
        return [b for b in bindings if acl_filter.matches(b)]

    assert matching(AclFilter()) == bindings
    assert matching(
        AclFilter(resource_type=TOPIC, resource_name="team-x", pattern_type=PatternType.MATCH)
    ) == [
        prefixed,
        literal,
        wildcard,
    ]
    assert matching(AclFilter(resource_name="team-", pattern_type=PREFIXED)) == [prefixed]
    assert matching(AclFilter(operation=Operation.WRITE)) == [literal]


def test_invalid_bindings_are_named(store: SecurityStore) -> None:
    assert acl("t", Operation.ANY).problem() is not None
    assert acl("t", Operation.READ, pattern=PatternType.MATCH).problem() is not None
    assert acl("t", Operation.READ, principal="alice").problem() is not None
    assert acl("other", Operation.ALTER, rtype=CLUSTER).problem() is not None
    assert acl("kafka-cluster", Operation.ALTER, rtype=CLUSTER).problem() is None


def test_acls_persist_in_the_security_store(tmp_path: Path) -> None:
    store = SecurityStore(tmp_path)
    store.load()
    store.apply_records([CreateAclRecord(acl("t", Operation.READ).as_tuple())])
    reloaded = SecurityStore(tmp_path)
    reloaded.load()
    assert allowed(authorizer_with(reloaded), Operation.READ, "t")


def test_lookups_stay_fast_with_thousands_of_acls(store: SecurityStore) -> None:
    bindings = [acl(f"team{i}.", Operation.READ, pattern=PREFIXED) for i in range(3000)]
    bindings += [acl(f"topic-{i}", Operation.WRITE) for i in range(3000)]
    authorizer = authorizer_with(store, *bindings)
    started = time.perf_counter()
    for i in range(2000):
        # Distinct names: every decision is computed, none is cached.
        assert allowed(authorizer, Operation.READ, f"team{i}.events-{i}")
        assert not allowed(authorizer, Operation.READ, f"topic-{i}")
    elapsed = time.perf_counter() - started
    # A scan of 6000 bindings per decision would take seconds; the index takes milliseconds.
    assert elapsed < 0.5, elapsed
