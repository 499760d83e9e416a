import type {
  AccessGrant,
  AclBinding,
  BrowseResult,
  ClientQuota,
  ScanProgress,
  ScramCredential,
  Topic,
  TopicDetail,
  TopicMessage,
} from "../api/types";
import { configEntry } from "./configFixtures";

export function topic(overrides: Partial<Topic> = {}): Topic {
  return {
    id: 30,
    cluster: 3,
    team: 1,
    name: "payments.orders",
    managed: true,
    partitions: 3,
    replication_factor: 1,
    configs: {},
    exists_on_cluster: true,
    observed_partitions: 3,
    observed_replication_factor: 1,
    observed_configs: {},
    size_bytes: 2048,
    message_count: 12,
    observed_at: "2026-01-05T10:00:00Z",
    created_at: "2026-01-04T10:00:00Z",
    ...overrides,
  };
}

export function topicDetail(overrides: Partial<TopicDetail> = {}): TopicDetail {
  return {
    ...topic(),
    live: {
      exists: true,
      partitions: [
        { partition: 0, leader: 0, replicas: [0], isr: [0], start_offset: 0, end_offset: 7, size_bytes: 700 },
        { partition: 1, leader: 0, replicas: [0], isr: [0], start_offset: 2, end_offset: 5, size_bytes: 300 },
      ],
      configs: {
        "retention.ms": configEntry({
          value: "3600000",
          source: "DYNAMIC_TOPIC_CONFIG",
          type: "long",
          documentation: "How long records are kept; -1 keeps them forever.",
          default: { name: "log.retention.hours", value: "604800000", source: "DEFAULT_CONFIG" },
          unit: "ms",
          unlimited: "-1",
          rule: { allowed: true, minimum: 0, maximum: 2592000000, reason: "The team's guardrail caps retention." },
        }),
        "cleanup.policy": configEntry({
          value: "delete",
          type: "list",
          choices: ["delete", "compact"],
          multiple: true,
        }),
        "message.format.version": configEntry({ value: "3.0", read_only: true, type: "string" }),
      },
    },
    ...overrides,
  };
}

export function message(overrides: Partial<TopicMessage> = {}): TopicMessage {
  return {
    partition: 0,
    offset: 6,
    timestamp: "2026-01-05T10:00:00Z",
    size: 42,
    key: { data: "order-1", encoding: "utf-8" },
    value: { data: '{"id":"order-1","amount":12}', encoding: "utf-8" },
    headers: [{ key: "source", value: { data: "web", encoding: "utf-8" } }],
    ...overrides,
  };
}

/** One answer of the browse API: records, and a cursor/progress for scans and tails. */
export function browseResult(overrides: Partial<BrowseResult> = {}): BrowseResult {
  return { messages: [], cursor: null, progress: null, lag: null, end_offsets: { "0": 7 }, ...overrides };
}

export function scanProgress(overrides: Partial<ScanProgress> = {}): ScanProgress {
  return {
    scanned: 0,
    bytes_scanned: 0,
    matched: 0,
    remaining: 0,
    done: false,
    stopped_because: null,
    filter_errors: 0,
    first_filter_error: null,
    ...overrides,
  };
}

export function binding(overrides: Partial<AclBinding> = {}): AclBinding {
  return {
    id: 60,
    cluster: 3,
    team: 1,
    grant: null,
    managed: true,
    resource_type: "TOPIC",
    resource_name: "payments.",
    pattern_type: "PREFIXED",
    principal: "User:billing-app",
    host: "*",
    operation: "WRITE",
    permission: "ALLOW",
    exists_on_cluster: true,
    created_at: "2026-01-05T10:00:00Z",
    ...overrides,
  };
}

export function grant(overrides: Partial<AccessGrant> = {}): AccessGrant {
  return {
    id: 70,
    cluster: 3,
    team: 1,
    service_account: 20,
    template: "producer",
    topic_prefix: "payments.",
    group_prefix: "",
    transactional_id_prefix: "",
    bindings: [],
    created_at: "2026-01-05T10:00:00Z",
    ...overrides,
  };
}

export function quota(overrides: Partial<ClientQuota> = {}): ClientQuota {
  return {
    id: 80,
    cluster: 3,
    team: 1,
    entity: { user: "billing-app" },
    entity_key: "user=billing-app",
    managed: true,
    values: { producer_byte_rate: 1048576 },
    exists_on_cluster: true,
    observed_values: { producer_byte_rate: 1048576 },
    observed_at: "2026-01-05T10:00:00Z",
    created_at: "2026-01-05T10:00:00Z",
    ...overrides,
  };
}

export function scramCredential(overrides: Partial<ScramCredential> = {}): ScramCredential {
  return {
    id: 90,
    service_account: 20,
    cluster: 3,
    mechanism: "SCRAM-SHA-512",
    username: "billing-app",
    created_at: "2026-01-05T10:00:00Z",
    rotated_at: null,
    ...overrides,
  };
}
