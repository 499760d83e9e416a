import type { Cluster, ClusterDetail, Operation, Organization } from "../api/types";
import { configEntry } from "./configFixtures";

export const acme: Organization = { id: 10, name: "Acme", slug: "acme", created_at: "2026-01-01T10:00:00Z" };

export function cluster(overrides: Partial<Cluster> = {}): Cluster {
  return {
    id: 3,
    organization: 10,
    name: "orders",
    provider: "local",
    engine: "streamhub",
    engine_version: "",
    engine_evidence: "",
    broker_count: 1,
    broker_config: {},
    requested_port: 0,
    bootstrap_servers: "127.0.0.1:19092",
    security_protocol: "PLAINTEXT",
    sasl_mechanism: "",
    admin_username: "",
    has_admin_credentials: false,
    partition_replicas_per_broker: null,
    partition_budget: { per_broker: 4000, brokers: 1, max_replicas: 4000, used_replicas: 12 },
    status: "running",
    status_reason: "",
    health: {
      reachable: true,
      brokers_up: 1,
      brokers_expected: 1,
      controller_id: 0,
      topic_count: 4,
      partition_count: 12,
      offline_partitions: 0,
      error: "",
    },
    health_checked_at: "2026-01-05T10:00:00Z",
    created_at: "2026-01-02T10:00:00Z",
    updated_at: "2026-01-05T10:00:00Z",
    ...overrides,
  };
}

export function clusterDetail(overrides: Partial<ClusterDetail> = {}): ClusterDetail {
  return {
    ...cluster(),
    brokers: [
      {
        node_id: 0,
        host: "127.0.0.1",
        port: 19092,
        controller_port: 0,
        metrics_port: 0,
        rack: "",
        roles: ["broker"],
        health: "up",
        status: "running",
        pid: 4242,
        restart_count: 2,
        last_seen: "2026-01-05T10:00:00Z",
        configs: {
          "num.partitions": configEntry({ value: "3", source: "STATIC_BROKER_CONFIG", read_only: true, type: "long" }),
          "log.retention.hours": configEntry({ value: "168", read_only: true, type: "long", unit: "hours" }),
          "ssl.key.password": configEntry({ value: null, read_only: true, sensitive: true, type: "password" }),
        },
      },
    ],
    configs_error: "",
    ...overrides,
  };
}

export function operation(overrides: Partial<Operation> = {}): Operation {
  return {
    id: 50,
    cluster: 3,
    cluster_name: "orders",
    kind: "provision",
    state: "pending",
    steps: ["allocate ports", "write configs", "start brokers", "wait for Metadata", "verify"],
    step: 0,
    step_count: 5,
    step_name: "",
    log: [],
    error: "",
    requested_by: "me",
    created_at: "2026-01-05T10:00:00Z",
    started_at: null,
    finished_at: null,
    ...overrides,
  };
}

export const logLine = (message: string, at = "2026-01-05T10:00:01Z") => ({ at, message });
