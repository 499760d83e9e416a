"""pytest plugin that gives kafka-python's SSL tests a StreamHub broker with an SSL listener.

kafka-python's fixtures take an external broker from KAFKA_URI, except its SSL tests
(`test/integration/test_ssl_integration.py`): they call `KafkaFixture.instance(..., transport='SSL')` themselves,
which formats and starts a Kafka install (`kafka-storage.sh`) with keystores made by `keytool`. run.py starts a
second broker with an SSL listener and a test CA instead, and names it with STREAMHUB_SSL_BOOTSTRAP=host:port and
STREAMHUB_SSL_DIR (which holds the CA as `ca-cert`, the file name the tests read). This plugin, loaded with
`-p kafka_python_plugin`, makes `KafkaFixture.instance` hand out that broker for SSL. Everything else in the suite
is kafka-python's, unchanged.
"""

from __future__ import annotations

import os


def pytest_configure(config) -> None:
    bootstrap = os.environ.get("STREAMHUB_SSL_BOOTSTRAP")
    if not bootstrap:
        return
    from test.integration import fixtures

    original = fixtures.KafkaFixture.instance.__func__
    host, port = bootstrap.rsplit(":", 1)

    def instance(cls, broker_id, *args, transport="PLAINTEXT", **kwargs):
        if transport.upper() != "SSL":
            return original(cls, broker_id, *args, transport=transport, **kwargs)
        fixture = cls(host, int(port), broker_id, transport="SSL", external=True)
        fixture.ssl_dir = os.environ["STREAMHUB_SSL_DIR"]
        return fixture

    fixtures.KafkaFixture.instance = classmethod(instance)
