import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import { useClusters } from "../api/hooks/clusters";
import { useDeleteQuota, useQuotas } from "../api/hooks/quotas";
import { useServiceAccounts } from "../api/hooks/serviceAccounts";
import { useTeams } from "../api/hooks/teams";
import type { ClientQuota, Cluster, Team } from "../api/types";
import { can, isOrgAdmin, roleInTeam, type Access } from "../auth/permissions";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { PageHeader } from "../components/PageHeader";
import { EmptyState, QueryView } from "../components/states";
import { useConfirmedAction } from "../components/useConfirmedAction";
import { formatBytes } from "../lib/bytes";
import { CreateQuotaForm, EditQuotaForm, QUOTA_KEYS, quotaValuesOf, type QuotaKey } from "./quotas/QuotaForm";

const column = createColumnHelper<ClientQuota>();

/**
 * Kafka has no "no limit" quota value: tools write Long.MAX_VALUE (bytes) or Integer.MAX_VALUE (requests,
 * percentages), which would read as "8388608.0 PiB/s". Anything that large means unlimited.
 */
export function isUnlimitedQuota(key: QuotaKey, value: number): boolean {
  return key.endsWith("byte_rate") ? value >= Number.MAX_SAFE_INTEGER : value >= 2 ** 31 - 1;
}

export function formatLimit(key: QuotaKey, value: number | undefined): string {
  if (value == null) return "—";
  if (isUnlimitedQuota(key, value)) return "unlimited";
  if (key.endsWith("byte_rate")) return `${formatBytes(value)}/s`;
  if (key === "request_percentage") return `${value} %`;
  return `${value}/s`;
}

function mayChange(access: Access, quota: ClientQuota, teams: Team[], clusters: Cluster[]): boolean {
  const cluster = clusters.find((each) => each.id === quota.cluster);
  if (cluster && isOrgAdmin(access, cluster.organization)) return true;
  const team = teams.find((each) => each.id === quota.team);
  return team !== undefined && can.manageAccess(roleInTeam(access, team));
}

export function QuotasPage() {
  const quotas = useQuotas();
  const clusters = useClusters();
  const teams = useTeams();
  const accounts = useServiceAccounts();
  const access = useAccess();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<ClientQuota | null>(null);
  const removal = useConfirmedAction(useDeleteQuota(), (quota: ClientQuota) => quota.id);

  const accessData = access.data;
  const manageableTeams = new Set(
    (teams.data ?? []).filter((team) => accessData && can.manageAccess(roleInTeam(accessData, team))).map((t) => t.id),
  );
  const canCreate =
    manageableTeams.size > 0 ||
    (clusters.data ?? []).some((cluster) => accessData && isOrgAdmin(accessData, cluster.organization));

  const columns = (clusterList: Cluster[], teamList: Team[], accessInfo: Access) => [
    column.accessor("entity_key", {
      header: "Entity",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    column.accessor((row) => clusterList.find((each) => each.id === row.cluster)?.name ?? String(row.cluster), {
      id: "cluster",
      header: "Cluster",
    }),
    ...QUOTA_KEYS.map(([key, label]) =>
      column.accessor((row) => quotaValuesOf(row)[key], {
        id: key,
        header: label,
        cell: (info) => formatLimit(key, info.getValue()),
      }),
    ),
    column.accessor((row) => (!row.managed ? "unmanaged" : row.exists_on_cluster ? "applied" : "missing"), {
      id: "status",
      header: "Status",
      cell: (info) => (
        <span
          className={
            info.getValue() === "applied"
              ? "badge badge--ok"
              : info.getValue() === "missing"
                ? "badge badge--danger"
                : "badge badge--info"
          }
        >
          {info.getValue()}
        </span>
      ),
    }),
    column.display({
      id: "actions",
      header: () => <span className="visually-hidden">Actions</span>,
      cell: (info) => {
        const quota = info.row.original;
        if (!mayChange(accessInfo, quota, teamList, clusterList)) return null;
        return (
          <span className="actions">
            <button
              type="button"
              className="button"
              aria-label={`Edit ${quota.entity_key}`}
              onClick={() => setEditing(quota)}
            >
              Edit
            </button>
            <button
              type="button"
              className="button button--danger"
              aria-label={`Delete ${quota.entity_key}`}
              onClick={() => removal.ask(quota)}
            >
              Delete
            </button>
          </span>
        );
      },
    }),
  ];

  return (
    <>
      <PageHeader
        title="Quotas"
        description="Byte-rate and request-time limits per user (service account) and client id, enforced by the brokers."
        actions={
          canCreate ? (
            <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
              New quota
            </button>
          ) : null
        }
      />
      <QueryView
        query={combineQueries(quotas, clusters, teams, access)}
        errorTitle="Could not load the quotas"
        isEmpty={([quotaList]) => quotaList.length === 0}
        empty={
          <EmptyState
            title="No quotas yet"
            description="Without quotas, clients may use the brokers as fast as they can."
          />
        }
      >
        {([quotaList, clusterList, teamList, accessInfo]) => (
          <DataTable
            label="Quotas"
            columns={columns(clusterList, teamList, accessInfo)}
            rows={quotaList}
            getRowId={(row) => String(row.id)}
            filterPlaceholder="Filter quotas…"
          />
        )}
      </QueryView>
      <Dialog open={creating} title="New quota" onClose={() => setCreating(false)}>
        <CreateQuotaForm
          clusters={clusters.data ?? []}
          accounts={(accounts.data ?? []).filter((account) => manageableTeams.has(account.team))}
          onDone={() => setCreating(false)}
        />
      </Dialog>
      <Dialog open={editing !== null} title="Edit quota" onClose={() => setEditing(null)}>
        {editing ? <EditQuotaForm quota={editing} onDone={() => setEditing(null)} /> : null}
      </Dialog>
      <ConfirmDialog
        {...removal.dialog}
        title="Delete this quota?"
        description="Its limits are removed from the cluster; the clients are no longer throttled by it."
        confirmationText={removal.target?.entity_key ?? ""}
      />
    </>
  );
}
