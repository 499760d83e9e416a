"""The only place the control plane talks to Kafka clusters (see gateway.py)."""
