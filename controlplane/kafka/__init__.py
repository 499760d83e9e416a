"""The only place the control plane talks to Kafka clusters: `connection.py` (how to reach a cluster, typed
errors, timeouts) and one module per resource family over it (`cluster`, `topics`, `configs`, `offsets`,
`log_dirs`, `reassignments`, `messages`, `acls`, `scram`, `quotas`, `groups`, `health`); `reader.py`
reads messages, `wire.py` is the small kio protocol client for the admin APIs librdkafka lacks."""
