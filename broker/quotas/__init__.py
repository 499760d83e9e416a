"""Client quotas, measured and enforced the way Kafka does (rate over sampled windows)."""
