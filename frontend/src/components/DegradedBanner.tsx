import type { ClusterStatus } from "../api/types";
import type { ClusterHealth } from "../pages/clusters/ClusterStatusBadge";

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * What makes a degraded cluster degraded, from its last health check:
 * under-replicated and offline partitions, brokers down or missing.
 */
export function DegradedBanner({
  status,
  reason,
  health,
}: {
  status: ClusterStatus;
  reason: string | undefined;
  health: ClusterHealth;
}) {
  if (status !== "degraded") return null;
  const problems: string[] = [];
  const offline = health.offline_partitions ?? 0;
  const underReplicated = health.under_replicated_partitions ?? 0;
  const down = health.dead_broker_ids ?? [];
  if (offline > 0) problems.push(`${plural(offline, "partition", "partitions")} offline (no leader)`);
  if (underReplicated > 0) problems.push(`${plural(underReplicated, "partition", "partitions")} under-replicated`);
  if (down.length > 0) problems.push(`${down.length === 1 ? "broker" : "brokers"} ${down.join(", ")} down`);
  const expected = health.brokers_expected ?? null;
  if (down.length === 0 && expected !== null && (health.brokers_up ?? 0) < expected) {
    problems.push(`${health.brokers_up ?? 0} of ${expected} brokers up`);
  }
  if (health.reachable === false) problems.push("unreachable");
  return (
    <div className={`callout ${offline > 0 ? "callout--danger" : "callout--warning"}`} role="alert">
      <strong>Degraded</strong>
      {problems.length > 0 ? `: ${problems.join(" · ")}` : ""}
      {reason ? <p>{reason}</p> : null}
    </div>
  );
}
