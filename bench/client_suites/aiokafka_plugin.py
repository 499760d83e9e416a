"""pytest plugin that points aiokafka's own test suite at a StreamHub broker instead of its Docker image.

Loaded into aiokafka's checkout with `-p aiokafka_plugin` (run.py puts this folder on PYTHONPATH). aiokafka's
`tests/conftest.py` starts a Kafka container in its session fixtures; this plugin swaps only those fixtures
(before pytest reads the conftest) for ones that hand out the broker run.py started, named by
STREAMHUB_BOOTSTRAP=host:port. Everything else in the suite is aiokafka's, unchanged.

What needs the container itself is skipped with the reason, not counted as a broker failure: SSL tests (the
container's generated certificates and SSL listener), the SASL/ACL tests (its JAAS users, Kerberos KDC and the
`kafka-acls.sh` / `kafka-configs.sh` it runs inside the container).
"""

from __future__ import annotations

import os
import pathlib
import types
from dataclasses import dataclass

import pytest

CONTAINER_ONLY = "needs the aiokafka Docker image (its SSL listener, JAAS users, KDC or CLI tools)"


@dataclass
class StreamHubServer:
    host: str
    port: int
    ssl_port: int = 0
    sasl_plain_port: int = 0
    sasl_ssl_port: int = 0
    container: object = None

    @property
    def hosts(self) -> list[str]:
        return [f"{self.host}:{self.port}"]


class _ContainerTool:
    """Stands in for ACLManager / KafkaConfig / KerberosUtils: any use skips the test."""

    def __getattr__(self, name: str):
        def skip(*_args, **_kwargs):
            pytest.skip(CONTAINER_ONLY)

        return skip


@pytest.fixture(scope="session")
def docker():
    return None


@pytest.fixture(scope="session")
def kafka_image():
    return None


@pytest.fixture(scope="session")
def ssl_folder():
    # Never created: only the SSL tests read it, and they are skipped.
    return pathlib.Path("tests/ssl_cert")


@pytest.fixture(scope="session")
def kafka_server():
    host, _, port = os.environ["STREAMHUB_BOOTSTRAP"].rpartition(":")
    return StreamHubServer(host, int(port))


@pytest.fixture(scope="class")
def acl_manager():
    return _ContainerTool()


@pytest.fixture(scope="class")
def kafka_config():
    return _ContainerTool()


@pytest.fixture(scope="class")
def kerberos_utils():
    return _ContainerTool()


REPLACED = {f.__name__: f for f in (docker, kafka_image, ssl_folder, kafka_server, acl_manager, kafka_config)}
REPLACED["kerberos_utils"] = kerberos_utils


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin: object, manager: object) -> None:
    """Replace the container fixtures in aiokafka's tests/conftest.py before pytest parses its fixtures."""
    is_conftest = isinstance(plugin, types.ModuleType) and plugin.__name__ in ("tests.conftest", "conftest")
    if is_conftest and hasattr(plugin, "kafka_server"):
        for name, fixture in REPLACED.items():
            setattr(plugin, name, fixture)


def pytest_configure(config: pytest.Config) -> None:
    # setup_test_class reads the Kafka version from --docker-image's tag: aiokafka's newest tested broker.
    if not config.getoption("--docker-image", default=None):
        config.option.docker_image = f"streamhub:{os.environ.get('STREAMHUB_AS_KAFKA_VERSION', '2.8.1')}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the tests that talk to a broker (aiokafka's unit tests say nothing about ours)."""
    items[:] = [item for item in items if "kafka_server" in getattr(item, "fixturenames", ())]
    for item in items:
        if item.get_closest_marker("ssl") is not None or item.path.name == "test_sasl.py":
            item.add_marker(pytest.mark.skip(reason=CONTAINER_ONLY))
