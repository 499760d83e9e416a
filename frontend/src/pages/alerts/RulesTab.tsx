import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";

import { ConfirmDialog } from "../../components/ConfirmDialog";
import { DataTable } from "../../components/DataTable";
import { Dialog } from "../../components/Dialog";
import { EmptyState, QueryView } from "../../components/states";
import { describeError } from "../../api/errors";
import { NewButton } from "./NewButton";
import { RuleForm } from "./RuleForm";
import { useManageableTeams } from "./access";
import { useAlertRules, useDeleteAlertRule, type AlertRule } from "./api";
import { SEVERITY_BADGES, describeCondition } from "./labels";

const column = createColumnHelper<AlertRule>();

/** The rules of the person's teams; developers create, edit and delete them. */
export function RulesTab() {
  const rules = useAlertRules();
  const teams = useManageableTeams();
  const editable = new Set(teams.map((team) => team.id));
  const [editing, setEditing] = useState<AlertRule | "new" | null>(null);
  const [deleting, setDeleting] = useState<AlertRule | null>(null);
  const remove = useDeleteAlertRule();

  const columns = [
    column.accessor("name", { header: "Name" }),
    column.accessor("team_name", { header: "Team" }),
    column.accessor((rule) => describeCondition(rule), { id: "condition", header: "Condition" }),
    column.accessor((rule) => `${rule.group_pattern} / ${rule.topic_pattern}`, {
      id: "scope",
      header: "Groups / topics",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    column.accessor((rule) => rule.cluster_name ?? "every cluster", { id: "cluster", header: "Cluster" }),
    column.accessor("severity", {
      header: "Severity",
      cell: (info) => <span className={SEVERITY_BADGES[info.getValue()]}>{info.getValue()}</span>,
    }),
    column.accessor("enabled", { header: "Enabled", cell: (info) => (info.getValue() ? "yes" : "no") }),
    column.display({
      id: "actions",
      header: "",
      cell: ({ row: { original: rule } }) =>
        editable.has(rule.team) ? (
          <div className="actions">
            <button type="button" className="button" onClick={() => setEditing(rule)}>
              Edit
            </button>
            <button type="button" className="button button--danger" onClick={() => setDeleting(rule)}>
              Delete
            </button>
          </div>
        ) : null,
    }),
  ];

  return (
    <>
      <NewButton visible={teams.length > 0} label="New rule" onClick={() => setEditing("new")} />
      <QueryView
        query={rules}
        errorTitle="Could not load the alert rules"
        isEmpty={(list) => list.length === 0}
        empty={
          <EmptyState title="No alert rules yet" description="A rule watches your groups' lag and notifies you." />
        }
      >
        {(list) => <DataTable label="Alert rules" columns={columns} rows={list} getRowId={(rule) => String(rule.id)} />}
      </QueryView>
      <Dialog
        open={editing !== null}
        title={editing === "new" ? "New alert rule" : "Edit alert rule"}
        onClose={() => setEditing(null)}
      >
        {editing !== null ? (
          <RuleForm teams={teams} rule={editing === "new" ? undefined : editing} onDone={() => setEditing(null)} />
        ) : null}
      </Dialog>
      <ConfirmDialog
        open={deleting !== null}
        title="Delete the alert rule"
        description="Its alerts and their history are deleted with it."
        confirmationText={deleting?.name ?? ""}
        pending={remove.isPending}
        error={remove.error ? describeError(remove.error) : undefined}
        onConfirm={() => deleting && remove.mutate(deleting.id, { onSuccess: () => setDeleting(null) })}
        onCancel={() => setDeleting(null)}
      />
    </>
  );
}
