"""Formatting a controller's metadata directory for a dynamic quorum, as `kafka-storage format` does.

KIP-853: a dynamic quorum's voters are known by node id *and* directory id, a UUID written into the
metadata directory once, when it is formatted. A node whose directory is wiped and formatted again
has a new directory id, so it cannot come back as the voter it was (it lost the log it voted with).

Kafka 4.0's three ways to format a controller, mirrored by `python -m broker format`:

- `--standalone`: this controller is the only voter of a new quorum (grow it with AddRaftVoter);
- `--initial-controllers 1@host:9093:<dir id>,2@host:9094:<dir id>,...`: the initial voters, the
  same on every one of them; each takes its own directory id from the list;
- `--no-initial-controllers`: a controller that joins an existing quorum as an observer (then
  AddRaftVoter promotes it).

Written into the metadata directory: `meta.properties` (`node.id`, `directory.id`, `cluster.id`)
and, for the first two, `bootstrap.json` (the initial voter set: kraft.version 1).
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from broker.raft.messages import Voter

META_PROPERTIES = "meta.properties"
BOOTSTRAP_VOTERS = "bootstrap.json"


class FormatError(Exception):
    """The directory or the arguments cannot be formatted (the message says why)."""


@dataclass(frozen=True, slots=True)
class MetadataDirectory:
    node_id: int
    directory_id: str
    cluster_id: str
    bootstrap_voters: tuple[Voter, ...]


def parse_directory_id(text: str) -> str:
    """A directory id as Kafka prints it (22 characters of base64url) or as a UUID; canonical UUID text."""
    text = text.strip()
    try:
        if len(text) == 22:
            return str(uuid.UUID(bytes=base64.urlsafe_b64decode(text + "==")))
        return str(uuid.UUID(text))
    except ValueError:
        raise FormatError(f"{text!r} is not a directory id (a UUID, or Kafka's base64url form)") from None


def kafka_uuid(directory_id: str) -> str:
    """Kafka's printed form of a UUID (`kafka-storage random-uuid`)."""
    return base64.urlsafe_b64encode(uuid.UUID(directory_id).bytes).decode("ascii").rstrip("=")


def parse_initial_controllers(text: str) -> tuple[Voter, ...]:
    """`1@host:9093:<dir id>,...` (Kafka's `--initial-controllers`)."""
    voters = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        node, at, rest = item.partition("@")
        address, colon, directory = rest.rpartition(":")
        host, colon2, port = address.rpartition(":")
        if not at or not colon or not colon2 or not node.isdigit() or not port.isdigit():
            raise FormatError(f"--initial-controllers: {item!r} is not id@host:port:directory-id")
        voters.append(Voter(int(node), parse_directory_id(directory), host.strip("[]"), int(port)))
    ids = [v.node_id for v in voters]
    if not voters or len(set(ids)) != len(ids):
        raise FormatError("--initial-controllers: at least one controller, each id once")
    return tuple(voters)


def format_metadata_dir(
    directory: Path,
    *,
    node_id: int,
    cluster_id: str,
    endpoint: tuple[str, int],
    standalone: bool = False,
    initial_controllers: str | None = None,
) -> MetadataDirectory:
    """Format `directory` once (an already formatted one is refused, as by `kafka-storage format`
    without --ignore-formatted). Without `standalone` or `initial_controllers` the node joins as an
    observer."""
    if standalone and initial_controllers:
        raise FormatError("--standalone and --initial-controllers exclude each other")
    if not cluster_id:
        raise FormatError("a cluster id is required (--cluster-id or cluster.id)")
    if (directory / META_PROPERTIES).exists():
        raise FormatError(f"{directory} is already formatted")
    voters: tuple[Voter, ...] = ()
    if initial_controllers:
        voters = parse_initial_controllers(initial_controllers)
        mine = [v for v in voters if v.node_id == node_id]
        if not mine:
            raise FormatError(f"--initial-controllers: node.id {node_id} is not one of them")
        directory_id = mine[0].directory_id
        assert directory_id is not None
    else:
        directory_id = str(uuid.uuid4())
        if standalone:
            voters = (Voter(node_id, directory_id, endpoint[0], endpoint[1]),)
    directory.mkdir(parents=True, exist_ok=True)
    if voters:
        _write(directory / BOOTSTRAP_VOTERS, json.dumps([v.to_json() for v in voters]))
    # meta.properties last: a crash before it leaves an unformatted directory, formatted again.
    _write(
        directory / META_PROPERTIES,
        f"version=1\nnode.id={node_id}\ndirectory.id={directory_id}\ncluster.id={cluster_id}\n",
    )
    return MetadataDirectory(node_id, directory_id, cluster_id, voters)


def read_metadata_dir(directory: Path, node_id: int) -> MetadataDirectory:
    path = directory / META_PROPERTIES
    if not path.exists():
        raise FormatError(
            f"{directory} is not formatted: a dynamic quorum's controller is formatted once with "
            "`python -m broker format` (--standalone, --initial-controllers or --no-initial-controllers)"
        )
    properties = dict(
        line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines() if "=" in line
    )
    if int(properties["node.id"]) != node_id:
        raise FormatError(f"{directory} was formatted for node {properties['node.id']}, not {node_id}")
    bootstrap = directory / BOOTSTRAP_VOTERS
    voters: tuple[Voter, ...] = ()
    if bootstrap.exists():
        voters = tuple(Voter.from_json(item) for item in json.loads(bootstrap.read_text(encoding="utf-8")))
    return MetadataDirectory(node_id, properties["directory.id"], properties["cluster.id"], voters)


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
