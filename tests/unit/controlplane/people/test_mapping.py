"""Mapping rules of single sign-on: parsing (a wrong rule stops start-up with its number) and matching on
any dotted claim path."""

import pytest

from controlplane.people.mapping import MappingRule, claim_values, matching_rules, parse_mapping_rules


def test_rules_default_to_the_groups_claim_and_the_viewer_role() -> None:
    rules = parse_mapping_rules(
        '[{"value": "kafka-dev", "organization": "acme", "team": "payments"},'
        ' {"claim": "realm_access.roles", "value": "admin", "organization": "acme", "org_admin": true}]',
        default_claim="groups",
    )
    assert rules == [
        MappingRule(claim="groups", value="kafka-dev", organization="acme", team="payments", role="viewer"),
        MappingRule(claim="realm_access.roles", value="admin", organization="acme", org_admin=True),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON"),
        ('{"value": "x"}', "JSON list"),
        ('[{"organization": "acme"}]', "rule 1 needs a non-empty string 'value'"),
        (
            '[{"value": "x", "organization": "acme"}, {"value": "y", "organization": "acme", "role": "root"}]',
            "rule 2: role",
        ),
        ('[{"value": "x", "organization": "acme", "teams": ["a"]}]', "unknown keys: teams"),
        ('[{"value": "x", "organization": "acme", "org_admin": "yes"}]', "org_admin true or false"),
    ],
)
def test_a_wrong_rule_is_refused_naming_it(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_mapping_rules(text, default_claim="groups")


def test_claim_values_follow_dotted_paths_and_take_lists_or_single_values() -> None:
    claims = {
        "groups": ["a", "b", 7, {"nested": "ignored"}],
        "realm_access": {"roles": ["admin"]},
        "hd": "example.com",
        "email_verified": True,
    }
    assert claim_values(claims, "groups") == ["a", "b", "7"]
    assert claim_values(claims, "realm_access.roles") == ["admin"]
    assert claim_values(claims, "hd") == ["example.com"]
    assert claim_values(claims, "email_verified") == []
    assert claim_values(claims, "realm_access.missing") == []
    assert claim_values(claims, "hd.deeper") == []


def test_only_rules_whose_value_the_claim_holds_match() -> None:
    rules = parse_mapping_rules(
        '[{"value": "a", "organization": "o"}, {"value": "c", "organization": "o"},'
        ' {"claim": "hd", "value": "example.com", "organization": "o"}]',
        default_claim="groups",
    )
    matched = matching_rules(rules, {"groups": ["a", "b"], "hd": "example.com"})
    assert [rule.value for rule in matched] == ["a", "example.com"]
