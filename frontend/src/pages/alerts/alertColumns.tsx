import { createColumnHelper } from "@tanstack/react-table";

import type { Alert } from "./api";
import { SEVERITY_BADGES, STATE_BADGES, alertSubject } from "./labels";

export const alertColumn = createColumnHelper<Alert>();

/** What every alert table starts with: how bad, which state, which rule, on what. */
export const ALERT_IDENTITY_COLUMNS = [
  alertColumn.accessor("severity", {
    header: "Severity",
    cell: (info) => <span className={SEVERITY_BADGES[info.getValue()]}>{info.getValue()}</span>,
  }),
  alertColumn.accessor("state", {
    header: "State",
    cell: (info) => <span className={STATE_BADGES[info.getValue()]}>{info.getValue()}</span>,
  }),
  alertColumn.accessor("rule_name", { header: "Rule" }),
  alertColumn.accessor((alert) => alertSubject(alert), { id: "subject", header: "Group" }),
];
