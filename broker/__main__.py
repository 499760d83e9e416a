"""`python -m broker --config broker.properties [--override key=value ...]`"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from broker.config import BrokerConfig, ConfigError
from broker.context import BrokerState
from broker.node.roles import controller_endpoint, metadata_dir, run_cluster_node
from broker.node.storage_format import FormatError, format_metadata_dir, kafka_uuid
from broker.server.app import BrokerServer
from broker.wire.allocator import tune_allocator

# Runs once the broker's state is open and its listeners are bound, before they serve; what it
# returns is closed on stop. Test launchers plug in here (tests/fixtures/static_broker.py).
BeforeServing = Callable[[BrokerState], Awaitable[Any]]


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m broker", description="Kafka-protocol broker")
    parser.add_argument("--config", help="path to a Kafka-style .properties file")
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set one property, overriding the file (repeatable)",
    )
    parser.add_argument("--log-level", default="INFO", help="Python logging level (default INFO)")
    return parser.parse_args(argv)


async def run(config: BrokerConfig, before_serving: BeforeServing | None = None) -> None:
    if config.get_str("process.roles"):
        await run_cluster_node(config)
        return
    server = BrokerServer(config)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, server.request_stop)
    try:
        await server.start(before_serving=before_serving)
    except BaseException:
        await server.stop()
        raise
    await server.serve_until_stopped()


def format_main(argv: list[str]) -> int:
    """`python -m broker format`: Kafka's `kafka-storage format` for a dynamic quorum's controller
    (see broker/node/storage_format.py)."""
    parser = argparse.ArgumentParser(prog="python -m broker format", description=format_main.__doc__)
    parser.add_argument("--config", help="path to the node's .properties file")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--cluster-id", "-t", default="", help="the cluster id (default: cluster.id)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--standalone", "-s", action="store_true", help="this controller is the only voter")
    mode.add_argument("--initial-controllers", "-I", metavar="ID@HOST:PORT:DIRID,...")
    mode.add_argument("--no-initial-controllers", "-N", action="store_true", help="join as an observer")
    args = parser.parse_args(argv)
    try:
        config = BrokerConfig.load(args.config, args.override)
        directory = metadata_dir(config)
        formatted = format_metadata_dir(
            directory,
            node_id=config.node_id,
            cluster_id=args.cluster_id or config.get_str("cluster.id"),
            endpoint=controller_endpoint(config),
            standalone=args.standalone,
            initial_controllers=args.initial_controllers,
        )
    except (ConfigError, FormatError, StopIteration) as exc:
        print(f"cannot format: {exc or 'no controller listener'}", file=sys.stderr)
        return 2
    print(f"Formatted {directory} (directory id {kafka_uuid(formatted.directory_id)})")
    return 0


def main(argv: list[str] | None = None, before_serving: BeforeServing | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["format"]:
        return format_main(argv[1:])
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        config = BrokerConfig.load(args.config, args.override)
    except ConfigError as exc:
        print(f"invalid broker configuration: {exc}", file=sys.stderr)
        return 2
    tune_allocator()
    try:
        import uvloop
    except ImportError:
        asyncio.run(run(config, before_serving))
    else:
        uvloop.run(run(config, before_serving))
    return 0


if __name__ == "__main__":
    sys.exit(main())
