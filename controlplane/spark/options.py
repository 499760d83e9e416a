"""The options of the topic data source, named as in Spark's own Kafka source, parsed into plain values.

Spark hands options over as a case-insensitive map of strings; everything is looked up by lower-cased name.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

EARLIEST = -2
LATEST = -1

# Spark's Kafka source passes Java client properties; librdkafka spells SASL credentials differently.
_JAAS_FIELD = re.compile(r'(username|password)\s*=\s*"((?:[^"\\]|\\.)*)"')
# Names a file of the session's (SparkFiles) holding librdkafka properties as one JSON object: the way to give a
# Spark Connect server credentials without writing them into the plan, which the server logs and records.
CONNECTION_FILE_OPTION = "connectionFile"


class InvalidOptions(ValueError):
    """The options cannot describe a read or a write (the message says which option and why)."""


@dataclass(frozen=True)
class OffsetSpec:
    """Where a range starts or ends: one default for every partition and exact offsets for some.

    `per_partition` maps (topic, partition) to an offset, EARLIEST or LATEST. `timestamp` (ms) or
    `per_partition_timestamp` resolve through ListOffsets instead when set.
    """

    default: int
    per_partition: dict[tuple[str, int], int] = field(default_factory=dict)
    timestamp: int | None = None
    per_partition_timestamp: dict[tuple[str, int], int] = field(default_factory=dict)


@dataclass(frozen=True)
class TopicSelection:
    """Exactly one of: named topics, a regular expression over topic names, or explicit partitions."""

    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assigned: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class ReadOptions:
    selection: TopicSelection
    starting: OffsetSpec
    ending: OffsetSpec
    include_headers: bool
    fail_on_data_loss: bool
    kafka_config: dict[str, str]
    min_partitions: int | None = None
    max_offsets_per_trigger: int | None = None
    poll_timeout_ms: int = 10_000


def lower_keys(options: Mapping[str, str]) -> dict[str, str]:
    return {str(key).lower(): str(value) for key, value in options.items()}


def kafka_client_config(options: Mapping[str, str]) -> dict[str, str]:
    """The `kafka.*` options without their prefix, as librdkafka properties, over those of the `connectionFile`.

    `kafka.sasl.jaas.config` (the Java way of giving credentials) becomes sasl.username / sasl.password.
    """
    lowered = lower_keys(options)
    config: dict[str, str] = {}
    for key, value in lowered.items():
        if not key.startswith("kafka."):
            continue
        name = key[len("kafka.") :]
        if name == "sasl.jaas.config":
            for field_name, field_value in _JAAS_FIELD.findall(value):
                config[f"sasl.{field_name}"] = field_value.replace('\\"', '"').replace("\\\\", "\\")
            continue
        config[name] = value
    file_name = lowered.get(CONNECTION_FILE_OPTION.lower())
    if file_name is not None:
        config = FileConnectionConfig(file_name, config)
    if "bootstrap.servers" not in config:
        raise InvalidOptions("option 'kafka.bootstrap.servers' is required")
    return config


class FileConnectionConfig(dict):
    """librdkafka properties read from a `connectionFile`, with the `kafka.*` options over them: a dict like any
    other config, but one that pickles as the file's name and those options, and reads the file again where it is
    unpickled. So the credentials never travel inside Spark's serialized tasks: each executor's Python worker reads
    them from the session's files (on Spark Connect, fetched into the session's own SparkFiles directory)."""

    def __init__(self, file_name: str, overrides: Mapping[str, str]) -> None:
        super().__init__({**read_connection_file(file_name), **overrides})
        self.file_name = file_name
        self.overrides = dict(overrides)

    def __reduce__(self) -> tuple[type[FileConnectionConfig], tuple[str, dict[str, str]]]:
        return FileConnectionConfig, (self.file_name, self.overrides)


def read_connection_file(name: str) -> dict[str, str]:
    """The librdkafka properties in the session file `name` (added with Spark Connect's
    `addArtifacts(path, file=True)` or `SparkContext.addFile`), where this Python process finds it: a Spark Python
    worker's SparkFiles root, which is the session's own directory on a Connect server, on its driver and
    executors alike. A missing file is an error, never a read without the credentials it was meant to carry."""
    from pyspark import SparkFiles

    if not name or os.path.basename(name) != name or name in (".", ".."):
        raise InvalidOptions(f"option '{CONNECTION_FILE_OPTION}' must be a plain file name, not {name!r}")
    path = SparkFiles.get(name)
    try:
        with open(path) as handle:
            content = json.load(handle)
    except FileNotFoundError:
        raise InvalidOptions(
            f"option '{CONNECTION_FILE_OPTION}' names {name!r}, which is not among this session's files "
            f"({SparkFiles.getRootDirectory()}): add it to the session (addArtifacts(path, file=True)) first"
        ) from None
    except json.JSONDecodeError as error:
        raise InvalidOptions(f"the connection file {name!r} is not JSON: {error}") from None
    if not isinstance(content, dict):
        raise InvalidOptions(
            f"the connection file {name!r} must hold one JSON object of librdkafka properties"
        )
    return {str(key): str(value) for key, value in content.items()}


def _parse_bool(options: dict[str, str], name: str, default: bool) -> bool:
    text = options.get(name.lower())
    if text is None:
        return default
    if text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    raise InvalidOptions(f"option '{name}' must be true or false, not {text!r}")


def _parse_positive_int(options: dict[str, str], name: str) -> int | None:
    text = options.get(name.lower())
    if text is None:
        return None
    try:
        number = int(text)
    except ValueError:
        raise InvalidOptions(f"option '{name}' must be an integer, not {text!r}") from None
    if number <= 0:
        raise InvalidOptions(f"option '{name}' must be positive, not {number}")
    return number


def _parse_selection(options: dict[str, str]) -> TopicSelection:
    given = [name for name in ("subscribe", "subscribepattern", "assign") if options.get(name)]
    if len(given) != 1:
        raise InvalidOptions("exactly one of 'subscribe', 'subscribePattern' or 'assign' must be given")
    if "subscribe" in given:
        topics = tuple(t.strip() for t in options["subscribe"].split(",") if t.strip())
        if not topics:
            raise InvalidOptions("option 'subscribe' names no topic")
        return TopicSelection(topics=topics)
    if "subscribepattern" in given:
        try:
            re.compile(options["subscribepattern"])
        except re.error as error:
            raise InvalidOptions(f"option 'subscribePattern' is not a regular expression: {error}") from None
        return TopicSelection(pattern=options["subscribepattern"])
    assigned = _json_object(options["assign"], "assign")
    pairs: list[tuple[str, int]] = []
    for topic, partitions in assigned.items():
        if not isinstance(partitions, list) or not all(isinstance(p, int) and p >= 0 for p in partitions):
            raise InvalidOptions(f"option 'assign' must map topics to lists of partition numbers ({topic!r})")
        pairs.extend((topic, p) for p in partitions)
    if not pairs:
        raise InvalidOptions("option 'assign' names no partition")
    return TopicSelection(assigned=tuple(sorted(set(pairs))))


def _json_object(text: str, name: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidOptions(f"option '{name}' is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise InvalidOptions(f"option '{name}' must be a JSON object")
    return value


def _per_partition(text: str, name: str, *, allowed_special: set[int]) -> dict[tuple[str, int], int]:
    result: dict[tuple[str, int], int] = {}
    for topic, partitions in _json_object(text, name).items():
        if not isinstance(partitions, dict):
            raise InvalidOptions(f"option '{name}' must map topics to {{partition: offset}} ({topic!r})")
        for partition, offset in partitions.items():
            if not str(partition).isdigit() or not isinstance(offset, int) or isinstance(offset, bool):
                raise InvalidOptions(
                    f"option '{name}' has a bad entry for {topic!r}: {partition!r}: {offset!r}"
                )
            if offset < 0 and offset not in allowed_special:
                raise InvalidOptions(f"option '{name}' cannot use offset {offset} for {topic}-{partition}")
            result[(topic, int(partition))] = offset
    return result


def _parse_offset_spec(options: dict[str, str], *, starting: bool) -> OffsetSpec:
    prefix = "starting" if starting else "ending"
    default = EARLIEST if starting else LATEST
    timestamp_text = options.get(f"{prefix}timestamp")
    by_timestamp_text = options.get(f"{prefix}offsetsbytimestamp")
    offsets_text = options.get(f"{prefix}offsets")
    if timestamp_text is not None:
        try:
            timestamp = int(timestamp_text)
        except ValueError:
            raise InvalidOptions(
                f"option '{prefix}Timestamp' must be milliseconds, not {timestamp_text!r}"
            ) from None
        return OffsetSpec(default=default, timestamp=timestamp)
    if by_timestamp_text is not None:
        stamps = _per_partition(by_timestamp_text, f"{prefix}OffsetsByTimestamp", allowed_special=set())
        return OffsetSpec(default=default, per_partition_timestamp=stamps)
    if offsets_text is None:
        return OffsetSpec(default=default)
    word = offsets_text.strip().lower()
    if word == "earliest":
        if not starting:
            raise InvalidOptions("option 'endingOffsets' cannot be 'earliest'")
        return OffsetSpec(default=EARLIEST)
    if word == "latest":
        return OffsetSpec(default=LATEST)
    # Spark allows -2 (earliest) only in startingOffsets and -1 (latest) in both.
    allowed = {EARLIEST, LATEST} if starting else {LATEST}
    return OffsetSpec(
        default=default,
        per_partition=_per_partition(offsets_text, f"{prefix}Offsets", allowed_special=allowed),
    )


def parse_read_options(options: Mapping[str, str], *, streaming: bool = False) -> ReadOptions:
    lowered = lower_keys(options)
    ending = _parse_offset_spec(lowered, starting=False)
    if streaming and (
        "endingoffsets" in lowered or "endingtimestamp" in lowered or "endingoffsetsbytimestamp" in lowered
    ):
        raise InvalidOptions("ending offsets are not allowed in a streaming query")
    starting = _parse_offset_spec(lowered, starting=True)
    if (
        not streaming
        and starting.default == LATEST
        and not starting.per_partition
        and starting.timestamp is None
    ):
        # Spark refuses this too: a batch from latest to latest reads nothing, which is never what was meant.
        raise InvalidOptions("option 'startingOffsets' cannot be 'latest' for a batch query")
    return ReadOptions(
        selection=_parse_selection(lowered),
        starting=starting,
        ending=ending,
        include_headers=_parse_bool(lowered, "includeHeaders", False),
        fail_on_data_loss=_parse_bool(lowered, "failOnDataLoss", True),
        kafka_config=kafka_client_config(lowered),
        min_partitions=_parse_positive_int(lowered, "minPartitions"),
        max_offsets_per_trigger=_parse_positive_int(lowered, "maxOffsetsPerTrigger"),
        poll_timeout_ms=_parse_positive_int(lowered, "kafkaConsumer.pollTimeoutMs") or 10_000,
    )
