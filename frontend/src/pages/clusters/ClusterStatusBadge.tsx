import type { ClusterStatus } from "../../api/types";

const TONE: Record<ClusterStatus, string> = {
  requested: "badge",
  provisioning: "badge badge--info",
  running: "badge badge--ok",
  degraded: "badge badge--warning",
  stopped: "badge",
  deleting: "badge badge--warning",
  deleted: "badge",
  failed: "badge badge--danger",
};

export function ClusterStatusBadge({ status }: { status: ClusterStatus }) {
  return <span className={TONE[status]}>{status}</span>;
}

const BROKER_HEALTH: Record<string, { text: string; tone: string }> = {
  up: { text: "up", tone: "badge badge--ok" },
  not_listed: { text: "not in Metadata", tone: "badge badge--warning" },
  down: { text: "down", tone: "badge badge--danger" },
};

/** A broker's status from the cluster's last health check (the API's `health` of a broker). */
export function BrokerHealthBadge({ health }: { health: string }) {
  const shown = BROKER_HEALTH[health] ?? { text: health, tone: "badge" };
  return <span className={shown.tone}>{shown.text}</span>;
}

/** "Could not read …" above a config table, when some brokers did not answer DescribeConfigs. */
export function ConfigsErrorCallout({ error }: { error: string }) {
  if (!error) return null;
  return (
    <p className="callout callout--warning" role="status">
      Could not read every broker's configs: {error}
    </p>
  );
}

/** What the last health check saw, as the API stores it on the cluster. */
export interface ClusterHealth {
  reachable?: boolean;
  brokers_up?: number;
  brokers_expected?: number | null;
  controller_id?: number | null;
  topic_count?: number;
  partition_count?: number;
  offline_partitions?: number;
  under_replicated_partitions?: number;
  broker_ids?: number[];
  dead_broker_ids?: number[];
  error?: string;
}

export function healthOf(value: unknown): ClusterHealth {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as ClusterHealth) : {};
}

/** One line: "healthy", "2 of 3 brokers up", "4 under-replicated partitions", "unreachable", or "not checked yet". */
export function describeHealth(health: ClusterHealth): { text: string; tone: "ok" | "warning" | "danger" | "none" } {
  if (health.reachable === undefined) return { text: "not checked yet", tone: "none" };
  if (!health.reachable) return { text: "unreachable", tone: "danger" };
  const up = health.brokers_up ?? 0;
  const expected = health.brokers_expected ?? null;
  if (expected !== null && up < expected) return { text: `${up} of ${expected} brokers up`, tone: "warning" };
  if ((health.offline_partitions ?? 0) > 0) {
    return { text: `${health.offline_partitions} offline partitions`, tone: "warning" };
  }
  if ((health.under_replicated_partitions ?? 0) > 0) {
    return { text: `${health.under_replicated_partitions} under-replicated partitions`, tone: "warning" };
  }
  return { text: `healthy · ${up} ${up === 1 ? "broker" : "brokers"} up`, tone: "ok" };
}

/** Health checks watch running and degraded clusters only (WATCHED_STATUSES); other health is stale. */
const WATCHED: ReadonlySet<ClusterStatus> = new Set(["running", "degraded"]);

export function HealthBadge({ health, status }: { health: unknown; status: ClusterStatus }) {
  if (!WATCHED.has(status)) return <span className="badge">not watched while {status}</span>;
  const { text, tone } = describeHealth(healthOf(health));
  const className = tone === "none" ? "badge" : `badge badge--${tone}`;
  return <span className={className}>{text}</span>;
}
