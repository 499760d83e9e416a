import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link } from "react-router";

import { useClusters } from "../api/hooks/clusters";
import type { Cluster } from "../api/types";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { PageHeader } from "../components/PageHeader";
import { Timestamp } from "../components/Timestamp";
import { EmptyState, QueryView } from "../components/states";
import { ClusterStatusBadge, describeHealth, healthOf, HealthBadge } from "./clusters/ClusterStatusBadge";
import { CreateClusterForm } from "./clusters/CreateClusterForm";
import { engineLabel } from "./clusters/engineLabel";
import { RegisterClusterForm } from "./clusters/RegisterClusterForm";
import { useAdministeredOrganizations } from "./clusters/useAdministeredOrganizations";

const column = createColumnHelper<Cluster>();

/** Brokers up of those expected, from the last health check; a deleted cluster has none left. */
export function brokersOf(cluster: Cluster): string {
  if (cluster.status === "deleted") return "none (deleted)";
  const health = healthOf(cluster.health);
  if (health.brokers_up === undefined) return String(cluster.broker_count);
  return `${health.brokers_up} of ${health.brokers_expected ?? cluster.broker_count} up`;
}
const columns = [
  column.accessor("name", {
    header: "Name",
    cell: (info) => <Link to={`/clusters/${info.row.original.id}`}>{info.getValue()}</Link>,
  }),
  column.accessor("status", { header: "Status", cell: (info) => <ClusterStatusBadge status={info.getValue()} /> }),
  column.accessor((cluster) => describeHealth(healthOf(cluster.health)).text, {
    id: "health",
    header: "Health",
    cell: (info) => <HealthBadge health={info.row.original.health} status={info.row.original.status} />,
  }),
  column.accessor("provider", { header: "Provider" }),
  column.accessor((cluster) => engineLabel(cluster), { id: "engine", header: "Engine" }),
  column.accessor(brokersOf, { id: "brokers", header: "Brokers" }),
  column.accessor((cluster) => cluster.bootstrap_servers ?? "", {
    id: "bootstrap",
    header: "Bootstrap servers",
    cell: (info) => <span className="mono">{info.getValue() || "—"}</span>,
  }),
  column.accessor("created_at", { header: "Created", cell: (info) => <Timestamp value={info.getValue()} /> }),
];

type OpenDialog = "create" | "register" | null;

export function ClustersPage() {
  const clusters = useClusters();
  const organizations = useAdministeredOrganizations();
  const [open, setOpen] = useState<OpenDialog>(null);
  const close = () => setOpen(null);

  const actions =
    organizations.length > 0 ? (
      <>
        <button type="button" className="button" onClick={() => setOpen("register")}>
          Register existing cluster
        </button>
        <button type="button" className="button button--primary" onClick={() => setOpen("create")}>
          Create cluster
        </button>
      </>
    ) : null;

  return (
    <>
      <PageHeader
        title="Clusters"
        description="Kafka clusters run here or registered by address, with their status and health."
        actions={actions}
      />
      <QueryView
        query={clusters}
        errorTitle="Could not load the clusters"
        isEmpty={(list) => list.length === 0}
        empty={
          <EmptyState
            title="No clusters yet"
            description={
              organizations.length > 0
                ? "Create a cluster on this host or register one you already run."
                : "An organization admin creates or registers clusters."
            }
          />
        }
      >
        {(list) => (
          <DataTable label="Clusters" columns={columns} rows={list} getRowId={(cluster) => String(cluster.id)} />
        )}
      </QueryView>
      <Dialog open={open === "create"} title="Create cluster" onClose={close}>
        <CreateClusterForm organizations={organizations} onClose={close} />
      </Dialog>
      <Dialog open={open === "register"} title="Register existing cluster" onClose={close}>
        <RegisterClusterForm organizations={organizations} onClose={close} />
      </Dialog>
    </>
  );
}
