import { createColumnHelper } from "@tanstack/react-table";
import { useState, type ReactNode } from "react";

import type { ConfigEntry } from "../../api/types";
import { DataTable } from "../../components/DataTable";
import { readableValue } from "../../lib/configValues";
import "./configs.css";

export interface ConfigRow extends ConfigEntry {
  name: string;
}

export const SOURCE_LABELS: Record<string, string> = {
  DYNAMIC_TOPIC_CONFIG: "topic override",
  DYNAMIC_BROKER_CONFIG: "dynamic broker override",
  DYNAMIC_DEFAULT_BROKER_CONFIG: "cluster default (dynamic)",
  STATIC_BROKER_CONFIG: "broker config file",
  DEFAULT_CONFIG: "Kafka default",
};

/** Overrides someone chose come first, then the rest by name. */
const OVERRIDES = new Set(["DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG"]);

export function configRows(configs: Record<string, ConfigEntry>): ConfigRow[] {
  return Object.entries(configs)
    .map(([name, entry]) => ({ name, ...entry }))
    .sort((a, b) => Number(OVERRIDES.has(b.source)) - Number(OVERRIDES.has(a.source)) || a.name.localeCompare(b.name));
}

export function ConfigValue({ entry }: { entry: ConfigEntry }) {
  if (entry.sensitive) return <span className="muted">hidden</span>;
  const readable = readableValue(entry.value, entry);
  return (
    <span className="config-value">
      <span>{readable}</span>
      {readable !== entry.value && entry.value !== null ? (
        <span className="config-value__raw mono">{entry.value}</span>
      ) : null}
    </span>
  );
}

export function ConfigSource({ entry }: { entry: ConfigEntry }) {
  const overridden = OVERRIDES.has(entry.source);
  return (
    <span className="config-source">
      <span className={overridden ? "badge badge--info" : "muted"}>{SOURCE_LABELS[entry.source] ?? entry.source}</span>
      {overridden && entry.default ? (
        <span className="config-source__default muted">default {readableValue(entry.default.value, entry)}</span>
      ) : null}
    </span>
  );
}

const column = createColumnHelper<ConfigRow>();

/**
 * A config list as the cluster reports it: what each one means, its value in units, where the value
 * comes from and the default a reset returns to. `actions` renders the last column (edit, read-only…).
 */
export function ConfigsTable({
  label,
  configs,
  actions,
}: {
  label: string;
  configs: Record<string, ConfigEntry>;
  actions?: (row: ConfigRow) => ReactNode;
}) {
  const [onlySet, setOnlySet] = useState(false);
  const columns = [
    column.accessor((row) => `${row.name} ${row.documentation ?? ""}`, {
      id: "name",
      header: "Config",
      cell: (info) => (
        <div className="config-name">
          <span className="mono">{info.row.original.name}</span>
          {info.row.original.documentation ? (
            <span className="config-name__doc">{info.row.original.documentation}</span>
          ) : null}
        </div>
      ),
      sortingFn: (a, b) => a.original.name.localeCompare(b.original.name),
    }),
    column.accessor((row) => `${row.value ?? ""} ${readableValue(row.value, row)}`, {
      id: "value",
      header: "Value",
      cell: (info) => <ConfigValue entry={info.row.original} />,
    }),
    column.accessor((row) => SOURCE_LABELS[row.source] ?? row.source, {
      id: "source",
      header: "Source",
      cell: (info) => <ConfigSource entry={info.row.original} />,
    }),
    ...(actions
      ? [
          column.display({
            id: "actions",
            header: () => <span className="visually-hidden">Actions</span>,
            cell: (info) => actions(info.row.original),
          }),
        ]
      : []),
  ];
  const rows = configRows(configs).filter((row) => !onlySet || row.source !== "DEFAULT_CONFIG");
  return (
    <>
      <label className="config-only-set">
        <input type="checkbox" checked={onlySet} onChange={(event) => setOnlySet(event.target.checked)} /> Only values
        set on this cluster (hide Kafka's defaults)
      </label>
      <DataTable
        label={label}
        columns={columns}
        rows={rows}
        getRowId={(row) => row.name}
        filterPlaceholder="Filter configs by name, meaning or value…"
        pagination={false}
        emptyTitle={onlySet ? "Every config has Kafka's default" : "The cluster reported no configs"}
      />
    </>
  );
}
