"""Client telemetry (KIP-714): CLIENT_METRICS subscriptions, GetTelemetrySubscriptions / PushTelemetry
state per client instance, and the receiver that exports what clients push on the Prometheus endpoint."""
