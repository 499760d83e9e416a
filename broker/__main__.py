"""`python -m broker --config broker.properties [--override key=value ...]`"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from broker.config import BrokerConfig, ConfigError
from broker.node.roles import run_cluster_node
from broker.server.app import BrokerServer
from broker.wire.allocator import tune_allocator


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


async def run(config: BrokerConfig) -> None:
    if config.get_str("process.roles"):
        await run_cluster_node(config)
        return
    server = BrokerServer(config)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, server.request_stop)
    try:
        await server.start()
    except BaseException:
        await server.stop()
        raise
    await server.serve_until_stopped()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
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
        asyncio.run(run(config))
    else:
        uvloop.run(run(config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
