"""Kafka wire protocol framing and response building (sans-IO); imports nothing else of the broker."""
