"""Fixtures of the JVM ecosystem tests (tests/fixtures/jvm_ecosystem.py)."""

from tests.fixtures.jvm_ecosystem import (  # noqa: F401 - fixtures
    jvm_driver,
    secure_cluster_target,
    secure_single_target,
)
