"""A controller node: the quorum driver (Raft node, storage, transport, metadata image, the write
path), the typed RPC handlers on top of it, and the controller listener serving peers (Raft
frames) and brokers (controller RPCs). See quorum_driver.py, handlers/ and listener.py.
"""

from __future__ import annotations

import logging

from broker.controller.handlers import handler_table
from broker.controller.image import MetadataImage
from broker.controller.listener import ControllerListener
from broker.controller.quorum_driver import ControllerNodeConfig, QuorumDriver
from broker.controller.quorum_observer import QuorumObserver
from broker.raft.node import RaftNode

log = logging.getLogger("broker.controller")


class ControllerServer:
    def __init__(self, config: ControllerNodeConfig) -> None:
        self.config = config
        self.driver = QuorumDriver(config)
        self.listener = ControllerListener(self.driver, handler_table(self.driver))

    @property
    def image(self) -> MetadataImage:
        return self.driver.image

    @property
    def node(self) -> RaftNode | None:
        return self.driver.node

    @property
    def bound_port(self) -> int:
        return self.driver.bound_port

    async def start(self) -> None:
        config, driver = self.config, self.driver
        await driver.open()
        driver.bound_port = await self.listener.start()
        if config.dynamic is None:
            driver.run()
        else:
            observer = QuorumObserver(driver)
            driver.run(observer.observer_loop, observer.endpoint_update_loop)
        log.info(
            "controller %d listening on %s:%d (%s), voters %s",
            config.node_id,
            config.listen_host,
            driver.bound_port,
            "mutual TLS" if config.tls is not None else "PLAINTEXT",
            list(driver.require_node().voters) or "(none: an observer)",
        )

    async def stop(self) -> None:
        await self.driver.hand_over()
        await self.listener.close()
        await self.driver.close()
