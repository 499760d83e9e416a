"""Kafka record batch v2: zero-copy header views, codecs, record encoding and decoding."""
