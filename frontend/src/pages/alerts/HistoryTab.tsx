import { useId, useState } from "react";

import { DataTable } from "../../components/DataTable";
import { Timestamp } from "../../components/Timestamp";
import { EmptyState, QueryView } from "../../components/states";
import { ALERT_IDENTITY_COLUMNS, alertColumn as column } from "./alertColumns";
import { useAlertHistory, type HistoryFilters } from "./api";

const optionalTime = (value: string | null | undefined) => (value ? <Timestamp value={value} /> : "—");

const columns = [
  ...ALERT_IDENTITY_COLUMNS,
  column.accessor("value_text", { header: "Last value" }),
  column.accessor("pending_since", { header: "Opened", cell: (info) => <Timestamp value={info.getValue()} /> }),
  column.accessor("fired_at", { header: "Fired", cell: (info) => optionalTime(info.getValue()) }),
  column.accessor("resolved_at", { header: "Resolved", cell: (info) => optionalTime(info.getValue()) }),
  column.accessor("notification_count", { header: "Notices" }),
  column.accessor("acknowledged_by_name", { header: "Acknowledged by", cell: (info) => info.getValue() || "—" }),
];

/** Every alert of the person's teams, newest first, filtered on the server. */
export function HistoryTab() {
  const stateId = useId();
  const groupId = useId();
  const [filters, setFilters] = useState<HistoryFilters>({});
  const history = useAlertHistory(filters);

  return (
    <>
      <div className="inline-form">
        <div className="field">
          <label htmlFor={stateId} className="field__label">
            State
          </label>
          <select
            id={stateId}
            className="input"
            value={filters.state ?? ""}
            onChange={(event) =>
              setFilters({ ...filters, state: (event.target.value || undefined) as HistoryFilters["state"] })
            }
          >
            <option value="">Any state</option>
            <option value="pending">Pending</option>
            <option value="firing">Firing</option>
            <option value="resolved">Resolved</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={groupId} className="field__label">
            Group contains
          </label>
          <input
            id={groupId}
            className="input"
            value={filters.group ?? ""}
            onChange={(event) => setFilters({ ...filters, group: event.target.value })}
          />
        </div>
      </div>
      <QueryView
        query={history}
        errorTitle="Could not load the alert history"
        isEmpty={(body) => body.results.length === 0}
        empty={<EmptyState title="No alerts" description="No alert matches these filters." />}
      >
        {(body) => (
          <DataTable
            label="Alert history"
            columns={columns}
            rows={body.results}
            getRowId={(alert) => String(alert.id)}
            filterable={false}
          />
        )}
      </QueryView>
    </>
  );
}
