"""Kafka clusters: their spec and status, provisioning workflows and health."""
