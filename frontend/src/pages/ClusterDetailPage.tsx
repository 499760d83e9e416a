import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link, NavLink, useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { describeError } from "../api/errors";
import { useAccess } from "../api/hooks/access";
import {
  isFinished,
  useCheckClusterHealth,
  useCluster,
  useClusterOperations,
  useDeleteCluster,
} from "../api/hooks/clusters";
import { useAddBroker, useRemoveBroker, useReplaceController } from "../api/hooks/replication";
import type { Broker, ClusterDetail } from "../api/types";
import { isOrgAdmin } from "../auth/permissions";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { DataTable } from "../components/DataTable";
import { DegradedBanner } from "../components/DegradedBanner";
import { PageHeader } from "../components/PageHeader";
import { ReassignmentsPanel } from "../components/ReassignmentsPanel";
import { Timestamp } from "../components/Timestamp";
import { EmptyState, QueryView } from "../components/states";
import {
  BrokerHealthBadge,
  ClusterStatusBadge,
  ConfigsErrorCallout,
  healthOf,
  HealthBadge,
} from "./clusters/ClusterStatusBadge";
import { engineLabel } from "./clusters/engineLabel";
import { LiveOperation, OperationProgress } from "./clusters/OperationProgress";
import { BrokerConfigs } from "./configs/BrokerConfigs";
import { TransactionsSection } from "./clusters/TransactionsSection";
import { NotFoundPage } from "./NotFoundPage";

/** The cluster page's tabs, each its own URL (/clusters/:id, /clusters/:id/brokers, /clusters/:id/configs). */
const TABS = {
  overview: "Overview",
  brokers: "Brokers",
  configs: "Broker configs",
  transactions: "Transactions",
} as const;
type Tab = keyof typeof TABS;

export function ClusterDetailPage() {
  const params = useParams();
  const id = Number(params.id);
  const tab = (params.tab ?? "overview") as Tab;
  if (!Number.isInteger(id) || id <= 0 || !(tab in TABS)) return <NotFoundPage />;
  return <ClusterDetailView id={id} tab={tab} />;
}

function ClusterDetailView({ id, tab }: { id: number; tab: Tab }) {
  const cluster = useCluster(id);
  const access = useAccess();
  return (
    <QueryView query={combineQueries(cluster, access)} errorTitle="Could not load the cluster">
      {([clusterData, accessData]) => (
        <ClusterSections
          cluster={clusterData}
          tab={tab}
          canAdminister={isOrgAdmin(accessData, clusterData.organization)}
        />
      )}
    </QueryView>
  );
}

function ClusterSections({
  cluster,
  tab,
  canAdminister,
}: {
  cluster: ClusterDetail;
  tab: Tab;
  canAdminister: boolean;
}) {
  const [deleting, setDeleting] = useState(false);
  const remove = useDeleteCluster(cluster.id);
  const checkHealth = useCheckClusterHealth(cluster.id);
  const gone = cluster.status === "deleting" || cluster.status === "deleted";

  return (
    <>
      <PageHeader
        title={cluster.name}
        description={
          <>
            <ClusterStatusBadge status={cluster.status} /> {cluster.provider === "local" ? "Local" : "External"} cluster
            {" · "}
            <span title={cluster.engine_evidence || undefined}>{engineLabel(cluster)}</span>
            {cluster.status_reason ? ` · ${cluster.status_reason}` : ""}
          </>
        }
        actions={
          <>
            <button
              type="button"
              className="button"
              disabled={checkHealth.isPending || gone}
              onClick={() => checkHealth.mutate()}
            >
              {checkHealth.isPending ? "Checking…" : "Check health"}
            </button>
            {canAdminister && !gone ? (
              <button type="button" className="button button--danger" onClick={() => setDeleting(true)}>
                Delete cluster
              </button>
            ) : null}
          </>
        }
      />
      {checkHealth.isError ? (
        <p className="form-error" role="alert">
          {describeError(checkHealth.error)}
        </p>
      ) : null}
      <DegradedBanner status={cluster.status} reason={cluster.status_reason} health={healthOf(cluster.health)} />
      <nav className="tabs" aria-label="Cluster sections">
        {(Object.keys(TABS) as Tab[]).map((each) => (
          <NavLink
            key={each}
            to={each === "overview" ? `/clusters/${cluster.id}` : `/clusters/${cluster.id}/${each}`}
            end
            className="tabs__tab"
          >
            {TABS[each]}
            {each === "brokers" ? ` (${cluster.brokers.length})` : ""}
          </NavLink>
        ))}
      </nav>
      {tab === "overview" ? (
        <>
          <HealthSection cluster={cluster} />
          <OperationsSection clusterId={cluster.id} />
        </>
      ) : null}
      {tab === "brokers" ? (
        <>
          <BrokersSection cluster={cluster} canAdminister={canAdminister && !gone} />
          {isReplicatedLocal(cluster) && !gone ? (
            <ReassignmentsPanel
              clusterId={cluster.id}
              brokerIds={cluster.brokers.map((broker) => broker.node_id)}
              canAdminister={canAdminister}
            />
          ) : null}
        </>
      ) : null}
      {tab === "configs" ? <BrokerConfigsSection cluster={cluster} canAdminister={canAdminister && !gone} /> : null}
      {tab === "transactions" && !gone ? (
        <TransactionsSection clusterId={cluster.id} canAdminister={canAdminister} />
      ) : null}
      <ConfirmDialog
        open={deleting}
        title={`Delete cluster ${cluster.name}?`}
        description={
          cluster.provider === "local"
            ? "Its brokers are stopped and all their data is removed. Clients lose access at once."
            : "The cluster is forgotten by the console; the cluster itself keeps running."
        }
        confirmationText={cluster.name}
        pending={remove.isPending}
        error={remove.isError ? describeError(remove.error) : null}
        onCancel={() => {
          setDeleting(false);
          remove.reset();
        }}
        onConfirm={() => remove.mutate(cluster.name, { onSuccess: () => setDeleting(false) })}
      />
    </>
  );
}

function HealthSection({ cluster }: { cluster: ClusterDetail }) {
  const health = healthOf(cluster.health);
  return (
    <section className="section" aria-labelledby="health-heading">
      <h2 id="health-heading" className="section__title">
        Health
      </h2>
      <dl className="details">
        <dt>Status</dt>
        <dd>
          <HealthBadge health={cluster.health} status={cluster.status} />
        </dd>
        <dt>Bootstrap servers</dt>
        <dd className="mono">{cluster.bootstrap_servers || "—"}</dd>
        <dt>Brokers up</dt>
        <dd>
          {health.brokers_up ?? "—"}
          {health.brokers_expected ? ` of ${health.brokers_expected}` : ""}
        </dd>
        <dt>Controller</dt>
        <dd>{health.controller_id ?? "—"}</dd>
        <dt>Topics / partitions</dt>
        <dd>
          {health.topic_count ?? "—"} / {health.partition_count ?? "—"}
          {health.offline_partitions ? ` (${health.offline_partitions} offline)` : ""}
        </dd>
        <dt>Under-replicated partitions</dt>
        <dd>{health.under_replicated_partitions ?? "—"}</dd>
        <dt>Last checked</dt>
        <dd>{cluster.health_checked_at ? <Timestamp value={cluster.health_checked_at} /> : "never"}</dd>
        {health.error ? (
          <>
            <dt>Error</dt>
            <dd className="mono">{health.error}</dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}

function OperationsSection({ clusterId }: { clusterId: number }) {
  const operations = useClusterOperations(clusterId);
  return (
    <section className="section" aria-labelledby="operations-heading">
      <h2 id="operations-heading" className="section__title">
        Recent operations
      </h2>
      <QueryView
        query={operations}
        errorTitle="Could not load the operations"
        isEmpty={(list) => list.length === 0}
        empty={<EmptyState title="No operations yet" />}
      >
        {(list) => (
          <div className="operations">
            {list.map((operation) =>
              isFinished(operation) ? (
                <OperationProgress key={operation.id} operation={operation} />
              ) : (
                <LiveOperation key={operation.id} id={operation.id} />
              ),
            )}
          </div>
        )}
      </QueryView>
    </section>
  );
}

/** A local cluster with a controller quorum: brokers join and leave it, and its partitions move. */
function isReplicatedLocal(cluster: ClusterDetail): boolean {
  return cluster.provider === "local" && cluster.brokers.some((broker) => broker.roles.includes("controller"));
}

const brokerColumn = createColumnHelper<Broker>();
const brokerColumns = (clusterId: number) => [
  brokerColumn.accessor("node_id", {
    header: "Node",
    cell: (info) => <Link to={`/clusters/${clusterId}/brokers/${info.getValue()}`}>Broker {info.getValue()}</Link>,
  }),
  brokerColumn.accessor((broker) => `${broker.host}:${broker.port}`, {
    id: "address",
    header: "Host:port",
    cell: (info) => <span className="mono">{info.getValue()}</span>,
  }),
  brokerColumn.accessor((broker) => broker.rack || "—", { id: "rack", header: "Rack" }),
  brokerColumn.accessor((broker) => (broker.roles.includes("controller") ? "controller + broker" : "broker"), {
    id: "role",
    header: "Role",
  }),
  brokerColumn.accessor((broker) => broker.status ?? "pending", { id: "status", header: "Process" }),
  brokerColumn.accessor("health", {
    header: "Status",
    cell: (info) => <BrokerHealthBadge health={info.getValue()} />,
  }),
  brokerColumn.accessor("restart_count", { header: "Restarts" }),
  brokerColumn.accessor((broker) => broker.last_seen ?? "", {
    id: "last_seen",
    header: "Last seen",
    cell: (info) => (info.getValue() ? <Timestamp value={info.getValue()} /> : "never"),
  }),
];

function BrokersSection({ cluster, canAdminister }: { cluster: ClusterDetail; canAdminister: boolean }) {
  const [removing, setRemoving] = useState<number | null>(null);
  const [replacing, setReplacing] = useState<number | null>(null);
  const add = useAddBroker(cluster.id);
  const remove = useRemoveBroker(cluster.id);
  const replace = useReplaceController(cluster.id);
  const manageable = canAdminister && isReplicatedLocal(cluster);
  const columns = manageable
    ? [
        ...brokerColumns(cluster.id),
        brokerColumn.display({
          id: "actions",
          header: "Actions",
          cell: (info) =>
            info.row.original.roles.includes("controller") ? (
              <button type="button" className="button" onClick={() => setReplacing(info.row.original.node_id)}>
                Replace controller {info.row.original.node_id}
              </button>
            ) : (
              <button
                type="button"
                className="button button--danger"
                onClick={() => setRemoving(info.row.original.node_id)}
              >
                Remove broker {info.row.original.node_id}
              </button>
            ),
        }),
      ]
    : brokerColumns(cluster.id);
  return (
    <section className="section" aria-labelledby="brokers-heading">
      <h2 id="brokers-heading" className="section__title">
        Brokers
      </h2>
      {manageable ? (
        <p>
          <button type="button" className="button" disabled={add.isPending} onClick={() => add.mutate()}>
            {add.isPending ? "Adding…" : "Add broker"}
          </button>
        </p>
      ) : null}
      {add.isError ? (
        <p className="form-error" role="alert">
          {describeError(add.error)}
        </p>
      ) : null}
      {/* The change just asked for, followed here; the overview lists every operation. */}
      {add.data ? <LiveOperation id={add.data.operation.id} /> : null}
      {remove.data ? <LiveOperation id={remove.data.operation.id} /> : null}
      {replace.data ? <LiveOperation id={replace.data.operation.id} /> : null}
      <DataTable
        label="Brokers"
        columns={columns}
        rows={cluster.brokers}
        getRowId={(broker) => String(broker.node_id)}
        filterable={false}
        pagination={false}
        emptyTitle="No brokers running"
      />
      <ConfirmDialog
        open={removing !== null}
        title={`Remove broker ${removing ?? ""}?`}
        description="Its replicas move to the other brokers first; then it is stopped, unregistered and its data removed."
        confirmationText={String(removing ?? "")}
        confirmLabel="Remove"
        pending={remove.isPending}
        error={remove.isError ? describeError(remove.error) : null}
        onCancel={() => {
          setRemoving(null);
          remove.reset();
        }}
        onConfirm={() => {
          if (removing !== null) remove.mutate(removing, { onSuccess: () => setRemoving(null) });
        }}
      />
      <ConfirmDialog
        open={replacing !== null}
        title={`Replace controller ${replacing ?? ""}?`}
        description="A new broker and controller node joins the quorum as a voter; this node's replicas move off it, then it leaves the quorum and is removed."
        confirmationText={String(replacing ?? "")}
        confirmLabel="Replace"
        pending={replace.isPending}
        error={replace.isError ? describeError(replace.error) : null}
        onCancel={() => {
          setReplacing(null);
          replace.reset();
        }}
        onConfirm={() => {
          if (replacing !== null) replace.mutate(replacing, { onSuccess: () => setReplacing(null) });
        }}
      />
    </section>
  );
}

/** One broker's configs at a time: every broker reports the same ~270 names, mixed they were unreadable. */
function BrokerConfigsSection({ cluster, canAdminister }: { cluster: ClusterDetail; canAdminister: boolean }) {
  const withConfigs = cluster.brokers.filter((broker) => broker.configs);
  const [nodeId, setNodeId] = useState<number | null>(withConfigs[0]?.node_id ?? null);
  const shown = withConfigs.find((broker) => broker.node_id === nodeId) ?? withConfigs[0];
  return (
    <section className="section" aria-labelledby="configs-heading">
      <h2 id="configs-heading" className="section__title">
        Broker configs
      </h2>
      <ConfigsErrorCallout error={cluster.configs_error} />
      {withConfigs.length > 1 ? (
        <p className="inline-form">
          <label htmlFor="config-broker">Broker</label>{" "}
          <select
            id="config-broker"
            className="input"
            style={{ width: "auto" }}
            value={shown?.node_id}
            onChange={(event) => setNodeId(Number(event.target.value))}
          >
            {withConfigs.map((broker) => (
              <option key={broker.node_id} value={broker.node_id}>
                Broker {broker.node_id}
              </option>
            ))}
          </select>
        </p>
      ) : null}
      {shown?.configs ? (
        <BrokerConfigs
          clusterId={cluster.id}
          nodeId={shown.node_id}
          configs={shown.configs}
          canAdminister={canAdminister}
        />
      ) : (
        <EmptyState title="No broker configs to show" />
      )}
    </section>
  );
}
