"""`python -m broker --config broker.properties [--override key=value ...]`"""

from __future__ import annotations

if __name__ == "__main__":
    # First, before any module imports kio: a broker process loads kio without Hypothesis (see the module).
    from broker.runtime.kio_loading import import_kio_without_hypothesis

    import_kio_without_hypothesis()

import argparse
import asyncio
import logging
import sys

from broker.config import BrokerConfig, ConfigError
from broker.node.roles import controller_endpoint, metadata_dir, run_cluster_node
from broker.node.single_node import is_single_node, single_node_overrides
from broker.node.storage_format import FormatError, format_metadata_dir, kafka_uuid
from broker.runtime.allocator import tune_allocator


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


def main(argv: list[str] | None = None) -> int:
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
        # Without cluster settings the node is its own one-voter quorum (broker/node/single_node.py).
        single_node = is_single_node(config)
        if single_node:
            config = BrokerConfig.load(args.config, [*args.override, *single_node_overrides(config)])
    except ConfigError as exc:
        print(f"invalid broker configuration: {exc}", file=sys.stderr)
        return 2
    tune_allocator()
    try:
        import uvloop
    except ImportError:
        asyncio.run(run_cluster_node(config, single_node=single_node))
    else:
        uvloop.run(run_cluster_node(config, single_node=single_node))
    return 0


if __name__ == "__main__":
    sys.exit(main())
