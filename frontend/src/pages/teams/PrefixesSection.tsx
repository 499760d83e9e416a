import { createColumnHelper } from "@tanstack/react-table";
import { useState, type FormEvent } from "react";

import { useAddPrefix, usePrefixes, useRemovePrefix } from "../../api/hooks/prefixes";
import type { PrefixResourceType, Team, TeamPrefix } from "../../api/types";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { DataTable } from "../../components/DataTable";
import { Field, FormError } from "../../components/Field";
import { QueryView } from "../../components/states";
import { useConfirmedAction } from "../../components/useConfirmedAction";
import { formErrorsOf } from "../../lib/formErrors";
import { removeColumn } from "./removeColumn";

export const RESOURCE_TYPE_LABELS: Record<PrefixResourceType, string> = {
  topic: "Topic",
  group: "Consumer group",
  transactional_id: "Transactional id",
  subject: "Schema subject",
};

const column = createColumnHelper<TeamPrefix>();

export function PrefixesSection({ team, canManage }: { team: Team; canManage: boolean }) {
  const prefixes = usePrefixes(team.id);
  const removal = useConfirmedAction(useRemovePrefix(), (teamPrefix: TeamPrefix) => teamPrefix.id);

  const columns = [
    column.accessor("resource_type", {
      header: "Resource type",
      cell: (info) => RESOURCE_TYPE_LABELS[info.getValue()],
    }),
    column.accessor("prefix", { header: "Prefix", cell: (info) => <span className="mono">{info.getValue()}</span> }),
    ...(canManage ? [removeColumn(column, removal.ask)] : []),
  ];

  return (
    <section className="section" aria-labelledby="prefixes-heading">
      <h2 id="prefixes-heading" className="section__title">
        Prefixes
      </h2>
      {canManage ? <AddPrefixForm team={team} /> : null}
      <QueryView query={prefixes} errorTitle="Could not load the prefixes">
        {(rows) => (
          <DataTable
            label="Prefixes"
            columns={columns}
            rows={rows}
            getRowId={(row) => String(row.id)}
            filterable={false}
            emptyTitle="No prefixes yet"
            emptyDescription="The team can create resources only under prefixes it owns."
          />
        )}
      </QueryView>
      <ConfirmDialog
        {...removal.dialog}
        title={`Remove the prefix ${removal.target?.prefix ?? ""}?`}
        description="The team can no longer create resources under it; existing ones stay."
        confirmationText={removal.target?.prefix ?? ""}
        confirmLabel="Remove"
      />
    </section>
  );
}

function AddPrefixForm({ team }: { team: Team }) {
  const addPrefix = useAddPrefix();
  const [resourceType, setResourceType] = useState<PrefixResourceType>("topic");
  const [prefix, setPrefix] = useState("");
  const errors = formErrorsOf(addPrefix.error, ["prefix", "resource_type"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    addPrefix.mutate({ team: team.id, resource_type: resourceType, prefix }, { onSuccess: () => setPrefix("") });
  }

  return (
    <form className="inline-form" onSubmit={submit} aria-label="Add a prefix">
      <Field label="Resource type" error={errors.fields.resource_type}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={resourceType}
            onChange={(event) => setResourceType(event.target.value as PrefixResourceType)}
          >
            {Object.entries(RESOURCE_TYPE_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Prefix" error={errors.fields.prefix}>
        {(control) => (
          <input
            {...control}
            className="input mono"
            required
            maxLength={249}
            autoComplete="off"
            value={prefix}
            onChange={(event) => setPrefix(event.target.value)}
          />
        )}
      </Field>
      <button type="submit" className="button button--primary" disabled={addPrefix.isPending}>
        Add prefix
      </button>
      <FormError message={errors.form} />
    </form>
  );
}
