"""The quota keys Kafka knows for user and client-id entities."""

from django.db import models


class QuotaKey(models.TextChoices):
    PRODUCER_BYTE_RATE = "producer_byte_rate", "Produce bytes per second"
    CONSUMER_BYTE_RATE = "consumer_byte_rate", "Fetch bytes per second"
    REQUEST_PERCENTAGE = "request_percentage", "Request handler time (percent)"
    CONTROLLER_MUTATION_RATE = "controller_mutation_rate", "Partition mutations per second"


def entity_key(entity: dict[str, str | None]) -> str:
    """A stable text key for an entity: `user=app,client-id=<default>`."""
    return ",".join(
        f"{kind}={'<default>' if entity[kind] is None else entity[kind]}"
        for kind in ("user", "client-id")
        if kind in entity
    )
