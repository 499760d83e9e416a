import type { Alert, AlertRule, Metric } from "./api";

export const METRIC_LABELS: Record<Metric, string> = {
  lag_messages: "Lag (messages)",
  lag_seconds: "Lag (seconds)",
  status: "Health status",
  time_to_catch_up: "Time to catch up (seconds)",
  broker_down: "Broker down",
  under_replicated_partitions: "Under-replicated partitions",
  offline_partitions: "Offline partitions",
  under_min_isr_partitions: "Partitions under min.insync.replicas",
  controller_changes_per_hour: "Controller changes in the last hour",
  disk_usage_percent: "Disk usage per broker (%)",
  cluster_unreachable: "Cluster unreachable",
  provisioning_failed: "Provisioning failed",
  connector_not_running: "Connector or task paused or failed",
  replication_lag_records: "Replication lag (records behind, worst partition)",
};

export const LAG_METRICS: Metric[] = ["lag_seconds", "lag_messages", "time_to_catch_up", "status"];

/** Cluster-health metrics and the threshold the API gives them when none is set (fires above it). */
export const CLUSTER_METRIC_DEFAULTS: Partial<Record<Metric, number>> = {
  broker_down: 0,
  under_replicated_partitions: 0,
  offline_partitions: 0,
  under_min_isr_partitions: 0,
  controller_changes_per_hour: 3,
  disk_usage_percent: 85,
  cluster_unreachable: 0,
  provisioning_failed: 0,
  // One alert per connector (the group pattern matches the connector's name).
  connector_not_running: 0,
  // One alert per replication flow (the group pattern matches the flow's name); the flow's own lag alert
  // threshold wins over this one.
  replication_lag_records: 0,
};

export function isClusterMetric(metric: Metric): boolean {
  return metric in CLUSTER_METRIC_DEFAULTS;
}

/** Cluster-health metrics with one alert per broker (the group pattern then matches `broker <id>`). */
export function isPerBrokerMetric(metric: Metric): boolean {
  return metric === "broker_down" || metric === "disk_usage_percent";
}

const COMPARISON_SIGNS: Record<string, string> = { gt: ">", gte: "≥", lt: "<", lte: "≤" };

export const SEVERITY_BADGES: Record<string, string> = {
  info: "badge badge--info",
  warning: "badge badge--warning",
  critical: "badge badge--danger",
};

export const STATE_BADGES: Record<string, string> = {
  pending: "badge badge--warning",
  firing: "badge badge--danger",
  resolved: "badge badge--ok",
};

/** "lag_seconds > 30 for 1m", in words people use. */
export function describeCondition(rule: AlertRule): string {
  const condition =
    rule.metric === "status"
      ? `status is ${rule.statuses.join(" or ")}`
      : `${METRIC_LABELS[rule.metric]} ${COMPARISON_SIGNS[rule.comparison] ?? rule.comparison} ${rule.threshold}`;
  return rule.for_seconds > 0 ? `${condition} for ${describeDuration(rule.for_seconds)}` : condition;
}

export function describeDuration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** The group, or `group topic[partition]` for per-partition alerts. */
export function alertSubject(alert: Alert): string {
  return alert.topic ? `${alert.group_name} ${alert.topic}[${alert.partition}]` : alert.group_name;
}
