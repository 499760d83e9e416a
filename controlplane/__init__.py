"""The control plane's domain apps. They reach Kafka clusters only through the Kafka protocol."""
