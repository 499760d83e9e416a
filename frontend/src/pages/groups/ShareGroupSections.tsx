import { createColumnHelper } from "@tanstack/react-table";
import { useState, type FormEvent } from "react";

import { describeError } from "../../api/errors";
import { useSetShareConfigs, type GroupConfig, type SharePartition } from "../../api/hooks/groups";
import { DataTable } from "../../components/DataTable";
import { FormError } from "../../components/Field";
import { TextField } from "../../components/FormFields";

const NUMBER = new Intl.NumberFormat();

const column = createColumnHelper<SharePartition>();
const columns = [
  column.accessor("topic", { header: "Topic", cell: (info) => <span className="mono">{info.getValue()}</span> }),
  column.accessor("partition", { header: "Partition" }),
  column.accessor("start_offset", { header: "Start offset", cell: (info) => NUMBER.format(info.getValue()) }),
  column.accessor("log_end_offset", { header: "Log end", cell: (info) => NUMBER.format(info.getValue()) }),
  column.accessor("in_flight", { header: "In flight", cell: (info) => NUMBER.format(info.getValue()) }),
  column.accessor("acknowledged", { header: "Acknowledged", cell: (info) => NUMBER.format(info.getValue()) }),
  column.accessor("lag", { header: "Backlog", cell: (info) => NUMBER.format(info.getValue()) }),
];

/** Per share-partition: start offset, the in-flight window up to the log end, and its unacknowledged backlog. */
export function SharePartitionsSection({ partitions }: { partitions: SharePartition[] }) {
  return (
    <section className="section" aria-labelledby="share-partitions">
      <h2 id="share-partitions" className="section__title">
        Backlog per share-partition
      </h2>
      <p className="muted">
        In flight: the records from the start offset to the log end. Acknowledged: those of them already accepted,
        rejected or archived. Backlog: the rest, acquired by a consumer or waiting to be.
      </p>
      <DataTable
        label="Share-partitions"
        columns={columns}
        rows={partitions}
        getRowId={(row) => `${row.topic}:${row.partition}`}
        initialSorting={[{ id: "lag", desc: true }]}
        emptyTitle="No share-partition state"
        emptyDescription="No consumer of the group has read a partition yet."
      />
    </section>
  );
}

/** The group's delivery settings (group configs); those allowed change them, empty returns to the default. */
export function DeliverySettingsSection({
  group,
  configs,
  canEdit,
}: {
  group: number;
  configs: GroupConfig[];
  canEdit: boolean;
}) {
  const save = useSetShareConfigs(group);
  const [draft, setDraft] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      configs.map((config) => [config.name, config.source === "GROUP_CONFIG" ? (config.value ?? "") : ""]),
    ),
  );
  const [saved, setSaved] = useState(false);

  function submit(event: FormEvent) {
    event.preventDefault();
    setSaved(false);
    const set: Record<string, string> = {};
    const reset: string[] = [];
    for (const config of configs) {
      const value = (draft[config.name] ?? "").trim();
      const wasSet = config.source === "GROUP_CONFIG";
      if (value && value !== (wasSet ? config.value : "")) set[config.name] = value;
      else if (!value && wasSet) reset.push(config.name);
    }
    save.mutate({ set, delete: reset }, { onSuccess: () => setSaved(true) });
  }

  return (
    <section className="section" aria-labelledby="share-settings">
      <h2 id="share-settings" className="section__title">
        Delivery settings
      </h2>
      {canEdit ? (
        <form className="reset-form" onSubmit={submit} aria-label="Delivery settings">
          {configs.map((config) => (
            <TextField
              key={config.name}
              label={config.name}
              value={draft[config.name] ?? ""}
              placeholder={`${config.value ?? ""} (${config.source === "GROUP_CONFIG" ? "set here" : "default"})`}
              hint={
                config.source === "GROUP_CONFIG"
                  ? "Set for this group; empty it to use the default."
                  : `Default: ${config.value ?? "—"}`
              }
              onChange={(value) => setDraft((current) => ({ ...current, [config.name]: value }))}
            />
          ))}
          <FormError message={save.error ? describeError(save.error) : null} />
          {saved ? <p role="status">Saved.</p> : null}
          <div className="actions">
            <button type="submit" className="button button--primary" disabled={save.isPending}>
              Save delivery settings
            </button>
          </div>
        </form>
      ) : (
        <dl className="details">
          {configs.map((config) => (
            <div key={config.name}>
              <dt className="mono">{config.name}</dt>
              <dd>
                {config.value ?? "—"} {config.source === "GROUP_CONFIG" ? "(set for this group)" : "(default)"}
              </dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}
