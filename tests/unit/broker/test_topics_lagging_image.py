"""CreateTopics in a cluster when this broker's metadata image lags the controller's commit (librdkafka's 0085
and 0086 on a loaded 3-node cluster): the topic exists, so the answer is the created topic, as Kafka answers once
its controller commits, not REQUEST_TIMED_OUT (whose retry would then get TOPIC_ALREADY_EXISTS)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from broker.config import BrokerConfig
from broker.controller.rpc.admin import CreateTopicsRequest, TopicResult, TopicResults
from broker.controller.rpc.base import Request
from broker.log.config import LogConfig
from broker.log.log_manager import LogManager
from broker.metadata.topic_registry import MetadataStore
from broker.topics import TopicManager


class ControllerAheadOfThisBroker:
    """The active controller as this broker's link sees it: it commits the topic and answers, and the
    record has not reached this broker's image (ControllerLink.call gave up waiting for it)."""

    def __init__(self) -> None:
        self.topic_id = uuid.uuid4()

    async def call(self, request: Request[Any]) -> TopicResults:
        assert isinstance(request, CreateTopicsRequest)
        name = request.topics[0].name
        return TopicResults((TopicResult(name, 0, "", str(self.topic_id)),))


def test_a_committed_topic_is_answered_before_this_broker_sees_it(tmp_path: Path) -> None:
    config = BrokerConfig.from_properties({"log.dirs": str(tmp_path / "logs"), "num.partitions": "3"})
    manager = TopicManager(config, MetadataStore(tmp_path), LogManager([tmp_path / "logs"], LogConfig()))
    controller = ControllerAheadOfThisBroker()
    manager.cluster = controller  # type: ignore[assignment]

    created = asyncio.run(manager.create("orders", replication_factor=1, configs={"retention.ms": "1000"}))

    assert (created.name, created.topic_id, created.partitions, created.replication_factor) == (
        "orders",
        controller.topic_id,
        3,
        1,
    )
    assert created.configs == {"retention.ms": "1000"}
