import { createColumnHelper } from "@tanstack/react-table";
import { useState, type FormEvent } from "react";

import { useUpdateTopicConfigs } from "../../api/hooks/topics";
import type { TopicConfigEntry, TopicDetail } from "../../api/types";
import { DataTable } from "../../components/DataTable";
import { Dialog } from "../../components/Dialog";
import { Field, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";
import { LiveOperation } from "../clusters/OperationProgress";

interface ConfigRow extends TopicConfigEntry {
  name: string;
}

/** The topic's own overrides come first: they are what someone chose. */
const SOURCE_ORDER: Record<string, number> = { DYNAMIC_TOPIC_CONFIG: 0 };

const SOURCE_LABELS: Record<string, string> = {
  DYNAMIC_TOPIC_CONFIG: "topic override",
  DYNAMIC_BROKER_CONFIG: "broker (dynamic)",
  DYNAMIC_DEFAULT_BROKER_CONFIG: "cluster default (dynamic)",
  STATIC_BROKER_CONFIG: "broker config file",
  DEFAULT_CONFIG: "Kafka default",
};

const column = createColumnHelper<ConfigRow>();

export function ConfigsSection({ topic, canChange }: { topic: TopicDetail; canChange: boolean }) {
  const [editing, setEditing] = useState<ConfigRow | null>(null);
  const rows: ConfigRow[] = Object.entries(topic.live.configs)
    .map(([name, entry]) => ({ name, ...entry }))
    .sort((a, b) => (SOURCE_ORDER[a.source] ?? 1) - (SOURCE_ORDER[b.source] ?? 1) || a.name.localeCompare(b.name));

  const columns = [
    column.accessor("name", { header: "Config", cell: (info) => <span className="mono">{info.getValue()}</span> }),
    column.accessor("value", {
      header: "Value",
      cell: (info) =>
        info.row.original.sensitive ? (
          <span className="muted">hidden</span>
        ) : (
          <span className="mono">{info.getValue() ?? "—"}</span>
        ),
    }),
    column.accessor("source", {
      header: "Source",
      cell: (info) => (
        <span className={info.getValue() === "DYNAMIC_TOPIC_CONFIG" ? "badge badge--info" : "muted"}>
          {SOURCE_LABELS[info.getValue()] ?? info.getValue()}
        </span>
      ),
    }),
    ...(canChange
      ? [
          column.display({
            id: "actions",
            header: () => <span className="visually-hidden">Actions</span>,
            cell: (info) =>
              info.row.original.read_only ? (
                <span className="muted">read-only</span>
              ) : (
                <button
                  type="button"
                  className="button"
                  aria-label={`Edit ${info.row.original.name}`}
                  onClick={() => setEditing(info.row.original)}
                >
                  Edit
                </button>
              ),
          }),
        ]
      : []),
  ];

  return (
    <section className="section" aria-labelledby="configs-heading">
      <h2 id="configs-heading" className="section__title">
        Configs
      </h2>
      <DataTable
        label="Topic configs"
        columns={columns}
        rows={rows}
        getRowId={(row) => row.name}
        filterPlaceholder="Filter configs…"
        pagination={false}
        emptyTitle="The cluster reported no configs"
      />
      <Dialog open={editing !== null} title={`Edit ${editing?.name ?? ""}`} onClose={() => setEditing(null)}>
        {editing ? <EditConfigForm topic={topic} config={editing} onDone={() => setEditing(null)} /> : null}
      </Dialog>
    </section>
  );
}

function EditConfigForm({ topic, config, onDone }: { topic: TopicDetail; config: ConfigRow; onDone: () => void }) {
  const update = useUpdateTopicConfigs(topic.id);
  const [value, setValue] = useState(config.value ?? "");
  // Set when the cluster did not confirm the change in time (202): the form follows the operation.
  const [confirming, setConfirming] = useState<number | null>(null);
  const server = formErrorsOf(update.error, ["configs"]);
  const isOverride = config.source === "DYNAMIC_TOPIC_CONFIG";

  function submit(event: FormEvent) {
    event.preventDefault();
    update.mutate(
      { [config.name]: value },
      { onSuccess: (result) => ("operation" in result ? setConfirming(result.operation.id) : onDone()) },
    );
  }

  if (confirming !== null) return <LiveOperation id={confirming} />;

  return (
    <form onSubmit={submit} noValidate>
      <Field
        label="Value"
        hint={`Now from: ${SOURCE_LABELS[config.source] ?? config.source}. Saving makes it a topic override.`}
        error={server.fields.configs}
      >
        {(control) => (
          <input
            {...control}
            className="input mono"
            autoComplete="off"
            value={value}
            onChange={(event) => setValue(event.target.value)}
          />
        )}
      </Field>
      <FormError message={server.form} />
      <div className="dialog__actions">
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
        {isOverride ? (
          <button
            type="button"
            className="button"
            disabled={update.isPending}
            onClick={() => update.mutate({ [config.name]: null }, { onSuccess: onDone })}
          >
            Reset to default
          </button>
        ) : null}
        <button type="submit" className="button button--primary" disabled={update.isPending}>
          Save
        </button>
      </div>
    </form>
  );
}
