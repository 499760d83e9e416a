"""Broker throughput benchmark: `python -m bench.broker_throughput --help`."""
