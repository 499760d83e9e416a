import type { Alert, AlertRule, Metric } from "./api";

export const METRIC_LABELS: Record<Metric, string> = {
  lag_messages: "Lag (messages)",
  lag_seconds: "Lag (seconds)",
  status: "Health status",
  time_to_catch_up: "Time to catch up (seconds)",
};

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
