"""Kafka's `sasl.jaas.config`, parsed strictly and without ever repeating a password."""

from __future__ import annotations

import pytest

from broker.auth.jaas import PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE, parse_jaas_entry, sasl_credentials
from broker.config import ConfigError

SECRET = "s3cr3t-Pa55"
SCRAM = f'{SCRAM_LOGIN_MODULE} required username="admin" password="{SECRET}";'


def test_it_reads_the_username_and_password_of_a_scram_login() -> None:
    credentials = sasl_credentials(SCRAM, "SCRAM-SHA-512")
    assert (credentials.mechanism, credentials.username, credentials.password) == (
        "SCRAM-SHA-512",
        "admin",
        SECRET,
    )


def test_it_keeps_the_password_out_of_the_repr() -> None:
    credentials = sasl_credentials(SCRAM, "SCRAM-SHA-256")
    assert SECRET not in repr(credentials)
    assert SECRET not in repr(parse_jaas_entry(SCRAM))


def test_it_accepts_bare_values_line_breaks_and_extra_options() -> None:
    text = f"{PLAIN_LOGIN_MODULE}\n  required\n  username=broker\n  password=pw\n  tokenauth=false ;"
    entry = parse_jaas_entry(text)
    assert entry.login_module == PLAIN_LOGIN_MODULE
    assert entry.control_flag == "required"
    assert entry.options == {"username": "broker", "password": "pw", "tokenauth": "false"}
    assert sasl_credentials(text, "PLAIN").password == "pw"


def test_it_unescapes_quotes_and_backslashes_inside_quoted_values() -> None:
    text = rf'{SCRAM_LOGIN_MODULE} required username="a;b" password="say \"hi\" \\ ok";'
    credentials = sasl_credentials(text, "SCRAM-SHA-512")
    assert credentials.username == "a;b"
    assert credentials.password == 'say "hi" \\ ok'


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "expected '<LoginModule> <flag>"),
        (f'{SCRAM_LOGIN_MODULE} required username="admin" password="{SECRET}"', "must end with ';'"),
        (f'{SCRAM_LOGIN_MODULE} mandatory username="admin" password="{SECRET}";', "control flag 'mandatory'"),
        (f'{SCRAM_LOGIN_MODULE} required username="admin" password="{SECRET};', "unterminated quoted value"),
        (f'{SCRAM_LOGIN_MODULE} required username="admin" password "{SECRET}";', "option 'password' must be"),
        (f'{SCRAM_LOGIN_MODULE} required username="admin" password="{SECRET}" password="x";', "given twice"),
        (f'{SCRAM_LOGIN_MODULE} required username="admin" "{SECRET}";', "expected an option name"),
        (f'{SCRAM_LOGIN_MODULE} required username="admin" password="{SECRET}"; {SCRAM}', "exactly one"),
    ],
)
def test_it_rejects_malformed_entries_without_quoting_the_password(text: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match=r"sasl\.jaas\.config") as failure:
        parse_jaas_entry(text)
    assert complaint in str(failure.value)
    assert SECRET not in str(failure.value)


def test_it_requires_a_password() -> None:
    with pytest.raises(ConfigError, match="username and password are required"):
        sasl_credentials(f'{SCRAM_LOGIN_MODULE} required username="admin";', "SCRAM-SHA-512")


def test_it_rejects_a_login_module_that_cannot_do_the_mechanism() -> None:
    with pytest.raises(ConfigError, match="cannot authenticate with PLAIN"):
        sasl_credentials(SCRAM, "PLAIN")
    with pytest.raises(ConfigError, match="cannot authenticate with SCRAM-SHA-512"):
        sasl_credentials(f"{PLAIN_LOGIN_MODULE} required username=a password=b;", "SCRAM-SHA-512")


def test_it_rejects_an_unknown_login_module() -> None:
    with pytest.raises(ConfigError, match=r"login module 'com\.example\.Login'"):
        sasl_credentials("com.example.Login required username=a password=b;", "PLAIN")
