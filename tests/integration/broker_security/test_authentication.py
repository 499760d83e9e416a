"""SASL/PLAIN and SCRAM over SASL_PLAINTEXT and SASL_SSL with confluent-kafka and kcat."""

from __future__ import annotations

import subprocess
import time

import pytest
from confluent_kafka.admin import AdminClient

from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER, SecureBrokerProcess
from tests.integration.broker_security.clients import (
    ErrorLog,
    add_scram_user,
    consume_until,
    create_topic_as_admin,
    delete_scram_user,
    produce_one,
    unique,
)

MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


@pytest.mark.parametrize("tls", [False, True], ids=["sasl_plaintext", "sasl_ssl"])
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_it_authenticates_confluent_clients_with_each_mechanism(
    secure_broker: SecureBrokerProcess, mechanism: str, tls: bool
) -> None:
    user, password = unique("user"), "pw-" + unique("secret")
    # One credential serves every mechanism: PLAIN checks the password against it.
    add_scram_user(secure_broker, user, password, "SCRAM-SHA-512" if mechanism == "PLAIN" else mechanism)
    topic = unique("auth")
    create_topic_as_admin(secure_broker, topic)
    admin_config = secure_broker.client_config(mechanism=mechanism, tls=tls)
    assert produce_one(admin_config, topic, b"hello") is None
    values, errors = consume_until(admin_config, topic, unique("g"), 1)
    assert values == [b"hello"], errors
    # The new user authenticates too (it has no ACLs, so it sees no topics).
    metadata = AdminClient(secure_broker.client_config(user, password, mechanism, tls=tls)).list_topics(
        timeout=10
    )
    assert topic not in metadata.topics


@pytest.mark.parametrize("tls", [False, True], ids=["sasl_plaintext", "sasl_ssl"])
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_it_refuses_a_wrong_password_with_an_authentication_error(
    secure_broker: SecureBrokerProcess, mechanism: str, tls: bool
) -> None:
    errors = ErrorLog()
    client = AdminClient(
        {
            **secure_broker.client_config(ADMIN_USER, "not-the-password", mechanism, tls=tls),
            "error_cb": errors,
        }
    )
    with pytest.raises(Exception):  # noqa: B017,PT011 - librdkafka wraps it as a transport failure
        client.list_topics(timeout=3)
    client.poll(0.5)
    assert errors.authentication_failed(), [str(e) for e in errors.errors]
    message = next(e.str() for e in errors.errors if e.code() == -169)
    assert "Authentication failed" in message
    assert "not-the-password" not in secure_broker.log_text()


def test_an_unknown_user_fails_like_a_wrong_password(secure_broker: SecureBrokerProcess) -> None:
    errors = ErrorLog()
    client = AdminClient(
        {**secure_broker.client_config("nobody-" + unique("u"), "x", "SCRAM-SHA-256"), "error_cb": errors}
    )
    with pytest.raises(Exception):  # noqa: B017,PT011
        client.list_topics(timeout=3)
    client.poll(0.5)
    assert errors.authentication_failed()


def test_a_scram_user_created_by_the_admin_api_connects_at_once_and_not_after_deletion(
    secure_broker: SecureBrokerProcess,
) -> None:
    user, password = unique("svc"), "pw-" + unique("s")
    add_scram_user(secure_broker, user, password, "SCRAM-SHA-256")
    config = secure_broker.client_config(user, password, "SCRAM-SHA-256")
    AdminClient(config).list_topics(timeout=10)

    admin_client = AdminClient(secure_broker.client_config())
    described = admin_client.describe_user_scram_credentials([user])
    infos = described[user].result(timeout=10).scram_credential_infos
    assert [(info.mechanism.name, info.iterations) for info in infos] == [("SCRAM_SHA_256", 4096)]

    everyone = admin_client.describe_user_scram_credentials()  # no names: every user
    assert {"admin", user} <= set(everyone.result(timeout=10))

    delete_scram_user(secure_broker, user, "SCRAM-SHA-256")
    errors = ErrorLog()
    client = AdminClient({**config, "error_cb": errors})
    with pytest.raises(Exception):  # noqa: B017,PT011
        client.list_topics(timeout=3)
    client.poll(0.5)
    assert errors.authentication_failed()


def test_credentials_survive_a_restart_and_are_stored_salted(secure_broker_factory) -> None:
    broker = secure_broker_factory()
    user, password = unique("keep"), "pw-" + unique("s")
    add_scram_user(broker, user, password, "SCRAM-SHA-512")
    broker.restart()
    AdminClient(broker.client_config(user, password, "SCRAM-SHA-512")).list_topics(timeout=10)
    stored = (broker.log_dir / "security-metadata.json").read_text()
    assert user in stored
    assert password not in stored
    assert ADMIN_PASSWORD not in stored
    assert (broker.log_dir / "security-metadata.json").stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("tls", [False, True], ids=["sasl_plaintext", "sasl_ssl"])
@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kcat_authenticates_with_scram_and_fails_with_a_wrong_password(
    secure_broker: SecureBrokerProcess, kcat: str, mechanism: str, tls: bool
) -> None:
    user, password = unique("kcat"), "pw-" + unique("s")
    add_scram_user(secure_broker, user, password, mechanism)
    if tls:
        transport = [
            "-b",
            f"127.0.0.1:{secure_broker.ssl_port}",
            "-X",
            "security.protocol=SASL_SSL",
            "-X",
            f"ssl.ca.location={secure_broker.certificates.ca_path}",
        ]
    else:
        transport = ["-b", secure_broker.bootstrap, "-X", "security.protocol=SASL_PLAINTEXT"]

    def run(secret: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                kcat,
                *transport,
                "-L",
                "-m",
                "5",
                "-X",
                f"sasl.mechanisms={mechanism}",
                "-X",
                f"sasl.username={user}",
                "-X",
                f"sasl.password={secret}",
            ],
            capture_output=True,
            text=True,
            timeout=20,
        )

    ok = run(password)
    assert ok.returncode == 0, ok.stderr
    assert "1 brokers" in ok.stdout
    bad = run("wrong")
    assert bad.returncode != 0
    assert "Authentication failed" in bad.stderr or "SASL authentication error" in bad.stderr


def test_repeated_failures_from_one_address_are_answered_more_slowly(secure_broker_factory) -> None:
    broker = secure_broker_factory(connection_failed_authentication_delay_ms=150)
    from tests.integration.broker_security.wire import authenticate_plain

    timings = []
    for _ in range(3):
        started = time.monotonic()
        error_code, _closed = authenticate_plain(broker, ADMIN_USER, "wrong")
        timings.append(time.monotonic() - started)
        assert error_code == 58
    assert timings[0] >= 0.14
    assert timings[2] >= 0.44 > timings[0]


def test_a_confluent_producer_reauthenticates_when_its_session_expires(secure_broker_factory) -> None:
    from confluent_kafka import Producer

    broker = secure_broker_factory(connections_max_reauth_ms=1000)
    topic = unique("reauth")
    create_topic_as_admin(broker, topic)
    errors = ErrorLog()
    delivered: list[object] = []
    producer = Producer({**broker.client_config(), "linger.ms": 0, "error_cb": errors})
    deadline = time.monotonic() + 3.5  # three session lifetimes
    while time.monotonic() < deadline:
        producer.produce(topic, b"m", on_delivery=lambda err, _msg: delivered.append(err))
        producer.poll(0.1)
    producer.flush(10)
    assert len(delivered) > 20
    assert all(error is None for error in delivered)
    assert not errors.errors, [str(e) for e in errors.errors]
    assert "SASL session expired" not in broker.log_text()


def test_credentials_with_too_few_iterations_or_unknown_users_are_refused(
    secure_broker: SecureBrokerProcess,
) -> None:
    import os

    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    client = AdminClient(secure_broker.client_config())
    weak = UserScramCredentialUpsertion(
        unique("weak"), ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1000), b"pw", os.urandom(16)
    )
    missing = UserScramCredentialDeletion(unique("ghost"), ScramMechanism.SCRAM_SHA_512)
    results = client.alter_user_scram_credentials([weak, missing])
    codes = {}
    for name, future in results.items():
        with pytest.raises(KafkaException) as raised:
            future.result(timeout=10)
        codes[name] = raised.value.args[0].code()
    assert codes == {weak.user: 93, missing.user: 91}  # UNACCEPTABLE_CREDENTIAL, RESOURCE_NOT_FOUND
