"""What each config means, as DescribeConfigs v3+ reports it when asked (`include_documentation`).

Kafka sends a documentation string per config so tools can explain a setting without a copy of Kafka's
docs; consoles show it next to the value. The texts are ours, short, and say what changing the value does.
Names missing here are answered with a null documentation, as Kafka does for configs it has no text for.
"""

from __future__ import annotations

TOPIC_CONFIG_DOCUMENTATION: dict[str, str] = {
    "cleanup.policy": (
        "How old log segments are removed: delete drops segments past the retention limits, compact keeps "
        "the latest record per key; both may be set."
    ),
    "compression.type": (
        "Codec the broker stores batches in. 'producer' keeps whatever the producer sent; another codec "
        "makes the broker recompress batches that arrive differently."
    ),
    "delete.retention.ms": (
        "On compacted topics, how long tombstones (null values) stay readable so that consumers can see "
        "the deletion before it is compacted away."
    ),
    "file.delete.delay.ms": "How long a segment removed from the log waits before its files are deleted.",
    "flush.messages": (
        "Force an fsync after this many records. Replication is the durability mechanism; leave it at the "
        "maximum unless a single-replica topic must survive power loss."
    ),
    "flush.ms": "Force an fsync after this much time since the last one; the maximum leaves it to the OS.",
    "index.interval.bytes": "Bytes of records between offset-index entries; smaller indexes more densely.",
    "max.compaction.lag.ms": "Longest time a record may stay uncompacted in a compacted log.",
    "max.message.bytes": (
        "Largest record batch the topic accepts, after compression. Consumers' fetch sizes must be at least "
        "this large."
    ),
    "message.timestamp.type": (
        "Which timestamp records keep: CreateTime (the producer's) or LogAppendTime (the broker's clock when "
        "it appended the batch)."
    ),
    "message.timestamp.before.max.ms": (
        "With CreateTime, how far in the past a record's timestamp may be before the batch is refused."
    ),
    "message.timestamp.after.max.ms": (
        "With CreateTime, how far in the future a record's timestamp may be before the batch is refused."
    ),
    "min.cleanable.dirty.ratio": (
        "Share of a compacted log that must be uncompacted before the cleaner runs on it (0 to 1)."
    ),
    "min.compaction.lag.ms": "Shortest time a record stays uncompacted, so consumers can still read it.",
    "min.insync.replicas": (
        "With acks=all, the replicas that must have a write before it is acknowledged; fewer in sync and "
        "producers get NOT_ENOUGH_REPLICAS."
    ),
    "preallocate": "Allocate a segment's file at full size when it is created.",
    "retention.bytes": (
        "Size a partition may grow to before its oldest segments are deleted (delete policy); -1: no limit."
    ),
    "retention.ms": (
        "How long records are kept before their segment may be deleted (delete policy); -1 keeps them "
        "forever."
    ),
    "segment.bytes": "Size at which the active segment file is closed and a new one started.",
    "segment.index.bytes": "Size of the offset index file of each segment.",
    "segment.jitter.ms": "Random time taken off segment.ms so that partitions do not all roll at once.",
    "segment.ms": (
        "Age at which the active segment is closed even if not full; retention and compaction only act on "
        "closed segments."
    ),
    "unclean.leader.election.enable": (
        "Let a replica that is not in sync become leader when no in-sync replica is left: the partition "
        "comes back sooner, and acknowledged records may be lost."
    ),
}

BROKER_CONFIG_DOCUMENTATION: dict[str, str] = {
    "node.id": "This node's id in the cluster.",
    "broker.id": "Older name of node.id.",
    "listeners": "Addresses the broker listens on, as NAME://host:port.",
    "advertised.listeners": "Addresses given to clients in Metadata; empty: the listeners.",
    "log.dirs": "Directories holding the partition logs.",
    "num.partitions": "Partitions of a topic created without a count (auto-creation or a default request).",
    "default.replication.factor": "Replicas of a topic created without a replication factor.",
    "auto.create.topics.enable": "Create a topic when a client produces to or fetches from an unknown one.",
    "delete.topic.enable": "Allow DeleteTopics; when false, deletions are refused.",
    "log.retention.ms": "Default retention.ms of topics; -2: use log.retention.minutes or .hours.",
    "log.retention.minutes": "Default retention in minutes when log.retention.ms is unset.",
    "log.retention.hours": "Default retention in hours when neither .ms nor .minutes is set.",
    "log.retention.bytes": "Default retention.bytes of topics; -1: no size limit.",
    "log.retention.check.interval.ms": "How often the broker looks for segments to delete.",
    "log.segment.bytes": "Default segment.bytes of topics.",
    "log.roll.ms": "Default segment.ms of topics; -2: use log.roll.hours.",
    "log.roll.hours": "Default segment age in hours when log.roll.ms is unset.",
    "log.roll.jitter.ms": "Default segment.jitter.ms of topics.",
    "log.index.interval.bytes": "Default index.interval.bytes of topics.",
    "log.index.size.max.bytes": "Default segment.index.bytes of topics.",
    "log.cleanup.policy": "Default cleanup.policy of topics.",
    "log.cleaner.enable": "Run the log cleaner, which compacts topics with the compact policy.",
    "log.cleaner.backoff.ms": "How long the cleaner sleeps when there is nothing to clean.",
    "replica.alter.log.dirs.io.max.bytes.per.second": (
        "The most bytes per second a replica moving to another log dir (AlterReplicaLogDirs) is copied at."
    ),
    "log.cleaner.delete.retention.ms": "Default delete.retention.ms of topics.",
    "log.cleaner.min.compaction.lag.ms": "Default min.compaction.lag.ms of topics.",
    "log.cleaner.max.compaction.lag.ms": "Default max.compaction.lag.ms of topics.",
    "log.cleaner.min.cleanable.ratio": "Default min.cleanable.dirty.ratio of topics.",
    "log.flush.interval.messages": "Default flush.messages of topics.",
    "log.flush.interval.ms": "Default flush.ms of topics.",
    "log.flush.scheduler.interval.ms": "How often the flusher checks whether a log needs an fsync.",
    "log.message.timestamp.type": "Default message.timestamp.type of topics.",
    "log.message.timestamp.before.max.ms": "Default message.timestamp.before.max.ms of topics.",
    "log.message.timestamp.after.max.ms": "Default message.timestamp.after.max.ms of topics.",
    "log.preallocate": "Default preallocate of topics.",
    "log.segment.delete.delay.ms": "Default file.delete.delay.ms of topics.",
    "compression.type": "Default compression.type of topics.",
    "message.max.bytes": "Default max.message.bytes of topics: the largest batch a topic accepts.",
    "min.insync.replicas": "Default min.insync.replicas of topics.",
    "unclean.leader.election.enable": "Default unclean.leader.election.enable of topics.",
    "socket.request.max.bytes": "Largest request the broker reads; bigger ones close the connection.",
    "socket.listen.backlog.size": (
        "Connections the kernel queues for each listener before the broker accepts them (capped by "
        "net.core.somaxconn); past it, new clients wait for a SYN retransmit."
    ),
    "queued.max.request.bytes": "Request bytes all connections may hold in memory at once.",
    "max.connections": "Connections the broker accepts in total.",
    "legacy.api.versions.enable": (
        "Serve the API versions Kafka 3.9 served and Kafka 4.0 removed (Fetch v0-3 with conversion to the old "
        "message format, ListOffsets v0) for older clients; false answers like Kafka 4.0."
    ),
    "max.connections.per.ip": "Connections the broker accepts from one IP address.",
    "max.connections.per.ip.overrides": "Per-address exceptions to max.connections.per.ip, host:count.",
    "group.initial.rebalance.delay.ms": "How long a new group waits for more members before its first rebalance.",
    "group.min.session.timeout.ms": "Shortest session timeout a consumer may ask for.",
    "group.consumer.session.timeout.ms": (
        "Consumer-protocol (KIP-848) groups: how long a member may go without a heartbeat before it is "
        "removed and its partitions reassigned."
    ),
    "group.consumer.heartbeat.interval.ms": (
        "Consumer-protocol groups: how often members heartbeat; a reassignment advances one heartbeat at a time."
    ),
    "group.consumer.max.size": "Consumer-protocol groups: most members one group may have.",
    "group.consumer.regex.refresh.interval.ms": (
        "Consumer-protocol groups: how old a group's resolution of its subscribed regular expressions may get "
        "before a heartbeat resolves them again (they are also resolved again when topics are created or deleted)."
    ),
    "group.consumer.assignors": (
        "Consumer-protocol groups: the server-side assignors members may choose (uniform, range); the first "
        "is used when a member names none."
    ),
    "group.consumer.migration.policy": (
        "Whether a group with members converts between the classic and the consumer protocol: bidirectional "
        "(default), upgrade (classic to consumer only), downgrade (consumer to classic only) or disabled."
    ),
    "group.max.session.timeout.ms": "Longest session timeout a consumer may ask for.",
    "offsets.topic.num.partitions": "Partitions of __consumer_offsets (fixed once the topic exists).",
    "offsets.topic.replication.factor": "Replicas of __consumer_offsets.",
    "offsets.topic.segment.bytes": "Segment size of __consumer_offsets.",
    "offsets.retention.minutes": "How long committed offsets of an empty group are kept.",
    "offsets.retention.check.interval.ms": "How often expired offsets are looked for.",
    "offsets.commit.timeout.ms": "How long an offset commit waits for its replicas.",
    "transactional.id.expiration.ms": "How long an idle transactional id is kept.",
    "transaction.state.log.num.partitions": "Partitions of __transaction_state (fixed once the topic exists).",
    "transaction.state.log.replication.factor": "Replicas of __transaction_state.",
    "transaction.state.log.min.isr": "min.insync.replicas of __transaction_state.",
    "transaction.state.log.segment.bytes": "Segment size of __transaction_state.",
    "transaction.max.timeout.ms": "Longest transaction.timeout.ms a producer may ask for.",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "How often transactions past their timeout are looked for and aborted.",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "How often expired transactional ids are looked for.",
    "add.partitions.to.txn.retry.backoff.ms": (
        "Transaction version 2: how long a transactional produce waits before asking the transaction "
        "coordinator again to add its partition while the previous transaction is still completing."
    ),
    "add.partitions.to.txn.retry.backoff.max.ms": (
        "Transaction version 2: how long in all a transactional produce keeps asking before it answers the "
        "producer CONCURRENT_TRANSACTIONS (at most request.timeout.ms)."
    ),
    "request.timeout.ms": "How long a request this broker sends to another broker may take.",
    "producer.id.expiration.ms": "How long an idle idempotent producer's state is kept.",
    "connections.max.idle.ms": "Idle connections are closed after this long.",
    "replica.fetch.max.bytes": "Bytes a follower asks for per partition in one fetch.",
    "process.roles": "broker, controller or both; empty: a single node, the only voter of its own quorum (both roles).",
    "controller.quorum.voters": "The controller quorum, id@host:port, comma separated.",
    "controller.quorum.bootstrap.servers": "A dynamic quorum's controllers to contact first, host:port, comma separated.",
    "controller.listener.names": "Listeners the controllers use among themselves.",
    "broker.rack": "Rack (or zone) of this broker; replicas of a partition are spread over racks.",
    "broker.heartbeat.interval.ms": "How often the broker heartbeats to the controller.",
    "broker.session.timeout.ms": "A broker without a heartbeat for this long is fenced.",
    "auto.leader.rebalance.enable": "Move leadership back to preferred replicas when it drifts.",
    "leader.imbalance.check.interval.seconds": "How often leadership balance is checked.",
    "leader.imbalance.per.broker.percentage": "Share of misplaced leaders that triggers a rebalance.",
    "listener.security.protocol.map": "Security protocol of each listener, NAME:PROTOCOL.",
    "sasl.enabled.mechanisms": "SASL mechanisms the broker accepts.",
    "super.users": "Principals allowed everything, User:name separated by semicolons.",
    "authorizer.class.name": "The authorizer; empty: no ACLs are checked.",
    "allow.everyone.if.no.acl.found": "Allow a resource that has no ACL at all to everyone.",
    "inter.broker.listener.name": "Listener the brokers replicate over.",
    "leader.replication.throttled.rate": "Bytes per second a leader may send to throttled followers.",
    "follower.replication.throttled.rate": "Bytes per second a follower may fetch for throttled replicas.",
    "background.threads": (
        "Kafka's pool of background threads. Accepted and kept for Kafka compatibility; this broker runs its "
        "background work on its event loop and worker threads, so the value changes nothing."
    ),
    "sasl.kerberos.min.time.before.relogin": (
        "Kafka's wait between Kerberos login refreshes. Accepted and kept for Kafka compatibility; this broker "
        "has no Kerberos (GSSAPI), so the value changes nothing."
    ),
    "metrics.port": "Port of the Prometheus endpoint (this broker's own property; 0: off).",
    "telemetry.max.bytes": "The largest metrics payload a client may push (PushTelemetry), compressed.",
    "client.telemetry.enable": (
        "Serve client telemetry (KIP-714: GetTelemetrySubscriptions, PushTelemetry) and export what clients "
        "push on the Prometheus endpoint (this broker's own property)."
    ),
    "client.telemetry.max.clients": (
        "Client instances whose pushed metrics are exported at once; the one that pushed least recently is "
        "dropped first (this broker's own property)."
    ),
    "quota.window.num": "Samples kept for client quota rates.",
    "quota.window.size.seconds": "Length of one client quota sample.",
}

GROUP_CONFIG_DOCUMENTATION: dict[str, str] = {
    "consumer.session.timeout.ms": (
        "For this consumer group (consumer protocol): how long a member may go without a heartbeat before the "
        "coordinator removes it and reassigns its partitions."
    ),
    "consumer.heartbeat.interval.ms": (
        "For this consumer group (consumer protocol): how often members send their heartbeat."
    ),
    "share.record.lock.duration.ms": "For this share group: how long a member holds the records it acquired.",
    "share.heartbeat.interval.ms": "For this share group: how often members send their heartbeat.",
    "share.session.timeout.ms": (
        "For this share group: how long a member may go without a heartbeat before it is removed."
    ),
    "share.auto.offset.reset": (
        "For this share group: where a share-partition starts when the group first reads it (earliest, "
        "latest, by_duration:<ISO-8601 duration>)."
    ),
    "share.isolation.level": "For this share group: whether records of open or aborted transactions are delivered.",
}
