from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.conformance.brokers import ConformanceBroker


@pytest.fixture(scope="session")
def conformance_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConformanceBroker]:
    """Our broker with the listeners, principals and authorizer of the session's Apache Kafka."""
    process = ConformanceBroker(tmp_path_factory.mktemp("conformance-broker"))
    process.start()
    yield process
    process.kill9()
