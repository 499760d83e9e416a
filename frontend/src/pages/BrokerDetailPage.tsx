import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link, useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import { useBroker, useCluster } from "../api/hooks/clusters";
import type { BrokerDetail, ClusterDetail, HostedReplica } from "../api/types";
import { isOrgAdmin } from "../auth/permissions";
import { DataTable } from "../components/DataTable";
import { PageHeader } from "../components/PageHeader";
import { ProgressBar } from "../components/ProgressBar";
import { QueryView } from "../components/states";
import { formatBytes } from "../lib/bytes";
import { BrokerConfigs } from "./configs/BrokerConfigs";
import "./clusters/brokers.css";
import { BrokerHealthBadge, ConfigsErrorCallout } from "./clusters/ClusterStatusBadge";
import { NotFoundPage } from "./NotFoundPage";

export function BrokerDetailPage() {
  const params = useParams();
  const id = Number(params.id);
  const nodeId = Number(params.nodeId);
  if (!Number.isInteger(id) || id <= 0 || !Number.isInteger(nodeId) || nodeId < 0) return <NotFoundPage />;
  return <BrokerDetailView clusterId={id} nodeId={nodeId} />;
}

function BrokerDetailView({ clusterId, nodeId }: { clusterId: number; nodeId: number }) {
  const broker = useBroker(clusterId, nodeId);
  const cluster = useCluster(clusterId);
  const access = useAccess();
  return (
    <QueryView
      query={combineQueries(broker, cluster, access)}
      errorTitle={`Could not ask the cluster about broker ${nodeId}`}
      loadingLabel="Asking the broker for its replicas and disks…"
    >
      {([brokerData, clusterData, accessData]) => (
        <BrokerSections
          broker={brokerData}
          cluster={clusterData}
          canAdminister={isOrgAdmin(accessData, clusterData.organization)}
        />
      )}
    </QueryView>
  );
}

export function roleOf(broker: Pick<BrokerDetail, "is_active_controller" | "is_controller_voter">): string {
  if (broker.is_active_controller) return "active controller";
  if (broker.is_controller_voter) return "controller voter";
  return "broker";
}

function BrokerSections({
  broker,
  cluster,
  canAdminister,
}: {
  broker: BrokerDetail;
  cluster: ClusterDetail;
  canAdminister: boolean;
}) {
  const [section, setSection] = useState<"replicas" | "configs">("replicas");
  const configs = cluster.brokers.find((each) => each.node_id === broker.node_id)?.configs ?? null;
  return (
    <>
      <PageHeader
        title={`Broker ${broker.node_id}`}
        description={
          <>
            <BrokerHealthBadge health={broker.health} /> <span className="badge badge--info">{roleOf(broker)}</span> in{" "}
            <Link to={`/clusters/${cluster.id}/brokers`}>{cluster.name}</Link>
          </>
        }
      />
      <dl className="details">
        <dt>Address</dt>
        <dd className="mono">
          {broker.host}:{broker.port}
        </dd>
        <dt>Rack</dt>
        <dd>{broker.rack || "—"}</dd>
        <dt>Replicas hosted</dt>
        <dd>{broker.replica_count.toLocaleString()}</dd>
        <dt>Leaders</dt>
        <dd>{broker.leader_count.toLocaleString()}</dd>
        <dt>Out of sync here</dt>
        <dd className={broker.out_of_sync_count > 0 ? "value--danger" : undefined}>{broker.out_of_sync_count}</dd>
        <dt>Under-replicated partitions</dt>
        <dd className={broker.under_replicated_count > 0 ? "value--warning" : undefined}>
          {broker.under_replicated_count}
        </dd>
        <dt>Messages in</dt>
        <dd title="Appended to the partitions it leads, from the lag sampler's log-end offsets over the last 5 minutes">
          {broker.messages_in_per_second === null
            ? "not sampled yet"
            : `${broker.messages_in_per_second.toLocaleString("en-US", { maximumFractionDigits: 1 })} /s as leader`}
        </dd>
      </dl>
      <NodeMetricsSection broker={broker} />
      <LogDirsSection broker={broker} />
      {/* Replicas and the ~100 configs one at a time, so the page stays one screen or two long. */}
      <div className="tabs" role="tablist" aria-label="Broker sections">
        {(["replicas", "configs"] as const).map((each) => (
          <button
            key={each}
            type="button"
            role="tab"
            aria-selected={section === each}
            className={`tabs__tab tabs__tab--button${section === each ? " active" : ""}`}
            onClick={() => setSection(each)}
          >
            {each === "replicas" ? `Replicas (${broker.replica_count})` : "Configs"}
          </button>
        ))}
      </div>
      {section === "replicas" ? <ReplicasSection broker={broker} /> : null}
      {section === "configs" ? (
        <section className="section" aria-label="Configs">
          <ConfigsErrorCallout error={cluster.configs_error} />
          {configs ? (
            <BrokerConfigs
              clusterId={cluster.id}
              nodeId={broker.node_id}
              configs={configs}
              canAdminister={canAdminister}
            />
          ) : null}
        </section>
      ) : null}
    </>
  );
}

function LogDirsSection({ broker }: { broker: BrokerDetail }) {
  return (
    <section className="section" aria-labelledby="log-dirs-heading">
      <h2 id="log-dirs-heading" className="section__title">
        Disks
      </h2>
      {broker.log_dirs_error ? (
        <p className="callout callout--warning" role="status">
          The broker did not describe its log directories: {broker.log_dirs_error}
        </p>
      ) : null}
      <ul className="log-dirs">
        {broker.log_dirs.map((dir) => {
          const known = dir.total_bytes !== null && dir.usable_bytes !== null && dir.total_bytes > 0;
          const used = known ? dir.total_bytes! - dir.usable_bytes! : 0;
          const percent = known ? (100 * used) / dir.total_bytes! : 0;
          return (
            <li key={dir.path} className="log-dirs__dir">
              <div className="log-dirs__head">
                <span className="mono">{dir.path}</span>
                {dir.error ? <span className="badge badge--danger">{dir.error}</span> : null}
              </div>
              <p className="muted">
                {formatBytes(dir.size_bytes)} in {dir.replica_count} replicas
                {known
                  ? ` · volume ${formatBytes(used)} of ${formatBytes(dir.total_bytes!)} used, ${formatBytes(dir.usable_bytes!)} free`
                  : " · the broker does not report the volume's size"}
              </p>
              {known ? (
                <ProgressBar
                  percent={percent}
                  label={`Volume of ${dir.path}`}
                  valueText={`${percent.toFixed(0)}% used`}
                />
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

const column = createColumnHelper<HostedReplica>();
const replicaColumns = [
  column.accessor("topic", { header: "Topic", cell: (info) => <span className="mono">{info.getValue()}</span> }),
  column.accessor("partition", { header: "Partition" }),
  column.accessor((row) => (row.is_leader ? "leader" : `follower of ${row.leader}`), {
    id: "role",
    header: "Role here",
  }),
  column.accessor((row) => row.replicas.join(", "), { id: "replicas", header: "Replicas" }),
  column.accessor((row) => (row.in_sync ? "in sync" : "out of sync"), {
    id: "in_sync",
    header: "This replica",
    cell: (info) =>
      info.row.original.in_sync ? (
        <span className="badge badge--ok">in sync</span>
      ) : (
        <span className="badge badge--danger">out of sync</span>
      ),
  }),
  column.accessor((row) => (row.under_replicated ? "under-replicated" : "complete"), {
    id: "partition_state",
    header: "Partition state",
    cell: (info) =>
      info.row.original.under_replicated ? (
        <span className="badge badge--warning">under-replicated</span>
      ) : (
        <span className="muted">ISR complete</span>
      ),
  }),
  column.accessor((row) => row.size_bytes ?? -1, {
    id: "size",
    header: "Size here",
    cell: (info) => (info.row.original.size_bytes === null ? "—" : formatBytes(info.row.original.size_bytes)),
  }),
];

function ReplicasSection({ broker }: { broker: BrokerDetail }) {
  return (
    <section className="section" aria-label="Replicas">
      <DataTable
        label="Hosted replicas"
        columns={replicaColumns}
        rows={broker.replicas}
        getRowId={(row) => `${row.topic}/${row.partition}`}
        filterPlaceholder="Filter by topic…"
        emptyTitle="This broker hosts no replicas"
        emptyDescription="Replicas land on a new broker only when partitions are created or reassigned onto it."
      />
    </section>
  );
}

function perSecond(value: number | null | undefined, unit: string): string {
  return value === null || value === undefined
    ? "measured at the next refresh (within 30 s)"
    : `${value.toLocaleString("en-US", { maximumFractionDigits: 1 })} ${unit}/s`;
}

/** The node's own Prometheus endpoint (local clusters of both engines): bytes and requests per second. */
function NodeMetricsSection({ broker }: { broker: BrokerDetail }) {
  const metrics = broker.metrics;
  return (
    <section className="section" aria-label="Node metrics">
      <h2 className="section__title">Node metrics</h2>
      {metrics ? (
        <dl className="details">
          <dt>Bytes in</dt>
          <dd>{perSecond(metrics.bytes_in_per_second, "B")}</dd>
          <dt>Bytes out</dt>
          <dd>{perSecond(metrics.bytes_out_per_second, "B")}</dd>
          <dt>Requests</dt>
          <dd>{perSecond(metrics.requests_per_second, "req")}</dd>
          <dt>Since start</dt>
          <dd>
            {metrics.bytes_in_total.toLocaleString()} B in, {metrics.bytes_out_total.toLocaleString()} B out,{" "}
            {metrics.requests_total.toLocaleString()} requests
          </dd>
          {metrics.under_replicated_partitions !== null ? (
            <>
              <dt>Under-replicated (node's own count)</dt>
              <dd className={metrics.under_replicated_partitions > 0 ? "value--warning" : undefined}>
                {metrics.under_replicated_partitions}
              </dd>
            </>
          ) : null}
        </dl>
      ) : (
        <p className="field__hint">No node metrics: {broker.metrics_error || "not available"}.</p>
      )}
    </section>
  );
}
