"""Small helpers shared by the broker integration tests."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(bootstrap: str, name: str, partitions: int = 1, **config: str) -> str:
    # Keep the AdminClient referenced until the future resolves: a collected client fails
    # its pending futures with _DESTROY.
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=config)])[name].result(10)
    return name
