"""Kafka's `sasl.jaas.config`: one JAAS login module entry holding a client's SASL credentials.

    org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="secret";

Grammar (what Kafka's JaasConfig accepts for this property): a login module class, a control
flag, `key=value` options (values bare or double-quoted, `\\` escapes the next character inside
quotes), one terminating `;`. Error messages name option keys and positions, never values: a
value may be a password.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from broker.config import ConfigError

SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
LOGIN_MODULE_MECHANISMS = {
    SCRAM_LOGIN_MODULE: frozenset({"SCRAM-SHA-256", "SCRAM-SHA-512"}),
    PLAIN_LOGIN_MODULE: frozenset({"PLAIN"}),
}
CONTROL_FLAGS = frozenset({"required", "requisite", "sufficient", "optional"})
_DELIMITERS = frozenset('=;"')


@dataclass(frozen=True, slots=True)
class JaasEntry:
    login_module: str
    control_flag: str
    options: dict[str, str] = field(repr=False)


@dataclass(frozen=True, slots=True)
class SaslCredentials:
    """A SASL client's identity; the password stays out of reprs (and so out of logs)."""

    mechanism: str
    username: str
    password: str = field(repr=False)


def _tokens(text: str, property_name: str) -> list[tuple[str, str, int]]:
    """(kind, text, position) with kind 'word', 'quoted' or the delimiter itself."""
    tokens: list[tuple[str, str, int]] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char.isspace():
            position += 1
        elif char in "=;":
            tokens.append((char, char, position))
            position += 1
        elif char == '"':
            start = position
            value: list[str] = []
            position += 1
            while True:
                if position >= len(text):
                    raise ConfigError(
                        f"{property_name}: unterminated quoted value starting at column {start + 1}"
                    )
                char = text[position]
                if char == "\\" and position + 1 < len(text):
                    value.append(text[position + 1])
                    position += 2
                elif char == '"':
                    position += 1
                    break
                else:
                    value.append(char)
                    position += 1
            tokens.append(("quoted", "".join(value), start))
        else:
            start = position
            while position < len(text) and not text[position].isspace() and text[position] not in _DELIMITERS:
                position += 1
            tokens.append(("word", text[start:position], start))
    return tokens


def parse_jaas_entry(text: str, property_name: str = "sasl.jaas.config") -> JaasEntry:
    """Parse exactly one login module entry; ConfigError (without values) when malformed."""
    tokens = _tokens(text, property_name)
    if len(tokens) < 3 or tokens[0][0] != "word" or tokens[1][0] != "word":
        raise ConfigError(f"{property_name}: expected '<LoginModule> <flag> key=value ... ;'")
    login_module, flag = tokens[0][1], tokens[1][1]
    if flag not in CONTROL_FLAGS:
        raise ConfigError(
            f"{property_name}: control flag {flag!r} is not one of {', '.join(sorted(CONTROL_FLAGS))}"
        )
    options: dict[str, str] = {}
    index = 2
    while True:
        if index >= len(tokens):
            raise ConfigError(f"{property_name}: the login module entry must end with ';'")
        kind, key, position = tokens[index]
        if kind == ";":
            break
        if kind != "word":
            raise ConfigError(f"{property_name}: expected an option name at column {position + 1}")
        if (
            index + 2 >= len(tokens)
            or tokens[index + 1][0] != "="
            or tokens[index + 2][0] not in ("word", "quoted")
        ):
            raise ConfigError(f"{property_name}: option {key!r} must be written {key}=value")
        if key in options:
            raise ConfigError(f"{property_name}: option {key!r} is given twice")
        options[key] = tokens[index + 2][1]
        index += 3
    if index != len(tokens) - 1:
        raise ConfigError(f"{property_name}: exactly one login module entry is allowed")
    return JaasEntry(login_module, flag, options)


def sasl_credentials(text: str, mechanism: str, property_name: str = "sasl.jaas.config") -> SaslCredentials:
    """The username and password a client authenticates with using `mechanism`."""
    entry = parse_jaas_entry(text, property_name)
    mechanisms = LOGIN_MODULE_MECHANISMS.get(entry.login_module)
    if mechanisms is None:
        known = ", ".join(sorted(LOGIN_MODULE_MECHANISMS))
        raise ConfigError(f"{property_name}: login module {entry.login_module!r} is not one of {known}")
    if mechanism not in mechanisms:
        raise ConfigError(f"{property_name}: {entry.login_module} cannot authenticate with {mechanism}")
    username, password = entry.options.get("username"), entry.options.get("password")
    if not username or not password:
        raise ConfigError(f"{property_name}: username and password are required")
    return SaslCredentials(mechanism, username, password)
