"""Shared fixtures for every tier. Real servers are started by the plugins below."""

pytest_plugins = [
    "tests.fixtures.servers",
    "tests.fixtures.broker",
]
