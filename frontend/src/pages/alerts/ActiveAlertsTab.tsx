import { DataTable } from "../../components/DataTable";
import { FormError } from "../../components/Field";
import { Timestamp } from "../../components/Timestamp";
import { EmptyState, QueryView } from "../../components/states";
import { formErrorsOf } from "../../lib/formErrors";
import { useManageableTeams } from "./access";
import { useAcknowledgeAlert, useActiveAlerts } from "./api";
import { ALERT_IDENTITY_COLUMNS, alertColumn as column } from "./alertColumns";

/** Pending and firing alerts, refreshed about once per sampling interval; acknowledging stops reminders. */
export function ActiveAlertsTab() {
  const alerts = useActiveAlerts();
  const acknowledge = useAcknowledgeAlert();
  const manageable = new Set(useManageableTeams().map((team) => team.id));

  const columns = [
    ...ALERT_IDENTITY_COLUMNS,
    column.accessor("cluster_name", { header: "Cluster" }),
    column.accessor("value_text", { header: "Value" }),
    column.accessor("reason", { header: "Why" }),
    column.accessor((alert) => alert.fired_at ?? alert.pending_since, {
      id: "since",
      header: "Since",
      cell: (info) => <Timestamp value={info.getValue()} relative />,
    }),
    column.display({
      id: "acknowledged",
      header: "Acknowledged",
      cell: ({ row: { original: alert } }) =>
        alert.acknowledged_by_name ? (
          <span>
            {alert.acknowledged_by_name}, <Timestamp value={alert.acknowledged_at ?? ""} relative />
          </span>
        ) : manageable.has(alert.team) ? (
          <button
            type="button"
            className="button"
            disabled={acknowledge.isPending}
            onClick={() => acknowledge.mutate(alert.id)}
          >
            Acknowledge
          </button>
        ) : (
          "—"
        ),
    }),
  ];

  return (
    <>
      <FormError message={formErrorsOf(acknowledge.error, []).form} />
      <QueryView
        query={alerts}
        errorTitle="Could not load the active alerts"
        isEmpty={(list) => list.length === 0}
        empty={
          <EmptyState title="Nothing is firing" description="Alerts appear here while a rule's condition holds." />
        }
      >
        {(list) => (
          <DataTable label="Active alerts" columns={columns} rows={list} getRowId={(alert) => String(alert.id)} />
        )}
      </QueryView>
    </>
  );
}
