"""Shared fixtures for every tier. Real servers are started by the plugins below."""

import pytest

pytest_plugins = [
    "tests.fixtures.servers",
    "tests.fixtures.broker",
    "tests.fixtures.oidc",
    "tests.fixtures.apache_kafka",
    "tests.fixtures.engines",
    "tests.fixtures.jvm_ecosystem",
    "tests.fixtures.spark_analysis",
]

# Fast feedback first: unit tests, then integration with real servers, then browser journeys. The browser tier
# also keeps Playwright's event loop alive for its session-scoped browser, so it must not precede asyncio tests.
TIER_ORDER = {"unit": 0, "integration": 1, "e2e": 2}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def tier(item: pytest.Item) -> int:
        parts = item.path.parts
        tests_index = len(parts) - 1 - parts[::-1].index("tests")
        return TIER_ORDER.get(parts[tests_index + 1], 1)

    items.sort(key=tier)  # stable: keeps file and definition order inside each tier
