import { DataTable } from "../../components/DataTable";
import { FormError } from "../../components/Field";
import { Timestamp } from "../../components/Timestamp";
import { EmptyState, QueryView } from "../../components/states";
import { formErrorsOf } from "../../lib/formErrors";
import { useManageableTeams } from "./access";
import { useAcknowledgeAlert, useActiveAlerts } from "./api";
import { alertColumn as column } from "./alertColumns";
import { SEVERITY_BADGES, STATE_BADGES, alertSubject } from "./labels";

/** Pending and firing alerts, refreshed about once per sampling interval; acknowledging stops reminders. */
export function ActiveAlertsTab() {
  const alerts = useActiveAlerts();
  const acknowledge = useAcknowledgeAlert();
  const manageable = new Set(useManageableTeams().map((team) => team.id));

  // Eight columns did not fit at 1280 px: severity and state share one, the rule names its subject and
  // cluster beneath it, and the reason (a sentence) wraps, so Acknowledge stays in view.
  const columns = [
    column.accessor("severity", {
      header: "Severity",
      cell: ({ row: { original: alert } }) => (
        <span className="badge-stack">
          <span className={SEVERITY_BADGES[alert.severity]}>{alert.severity}</span>
          <span className={STATE_BADGES[alert.state]}>{alert.state}</span>
        </span>
      ),
    }),
    column.accessor("rule_name", {
      header: "Alert",
      cell: ({ row: { original: alert } }) => (
        <span className="table__prose table__prose--narrow">
          {alert.rule_name}
          <span className="muted">
            {" "}
            · {alertSubject(alert)} on {alert.cluster_name}
          </span>
        </span>
      ),
    }),
    column.accessor("value_text", { header: "Value" }),
    column.accessor("reason", {
      header: "Why",
      cell: (info) => <span className="table__prose">{info.getValue()}</span>,
    }),
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
          <span className="table__prose table__prose--narrow">
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
