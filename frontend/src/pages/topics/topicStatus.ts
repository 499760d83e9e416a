import type { Topic } from "../../api/types";

export type TopicStatus = "in_sync" | "drift" | "missing" | "unmanaged" | "pending";

export const TOPIC_STATUS_LABELS: Record<TopicStatus, string> = {
  in_sync: "in sync",
  drift: "drift",
  missing: "missing",
  unmanaged: "unmanaged",
  pending: "not yet observed",
};

export const TOPIC_STATUS_BADGES: Record<TopicStatus, string> = {
  in_sync: "badge badge--ok",
  drift: "badge badge--warning",
  missing: "badge badge--danger",
  unmanaged: "badge badge--info",
  pending: "badge",
};

function configsOf(value: unknown): Record<string, string> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, string>) : {};
}

/** The configs a team asked for that the cluster reports differently (name → [wanted, observed]). */
export function configDrift(topic: Topic): Record<string, [string, string | undefined]> {
  const wanted = configsOf(topic.configs);
  const observed = configsOf(topic.observed_configs);
  const drift: Record<string, [string, string | undefined]> = {};
  for (const [name, value] of Object.entries(wanted)) {
    if (observed[name] !== value) drift[name] = [value, observed[name]];
  }
  return drift;
}

/**
 * How the topic compares with what the reconciler last saw on the cluster:
 * a managed topic is in sync when partitions, replication and its config
 * overrides all match.
 */
export function topicStatus(topic: Topic): TopicStatus {
  if (!topic.managed) return "unmanaged";
  if (!topic.observed_at) return "pending";
  if (!topic.exists_on_cluster) return "missing";
  const partitionsDiffer = topic.observed_partitions != null && topic.observed_partitions !== topic.partitions;
  const replicationDiffers =
    topic.observed_replication_factor != null &&
    topic.replication_factor != null &&
    topic.observed_replication_factor !== topic.replication_factor;
  if (partitionsDiffer || replicationDiffers || Object.keys(configDrift(topic)).length > 0) return "drift";
  return "in_sync";
}
