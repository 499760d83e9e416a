import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { describeError } from "../api/errors";
import { useAccess } from "../api/hooks/access";
import { useClusters } from "../api/hooks/clusters";
import {
  useAttachConnectCluster,
  useConnectClusters,
  useConnector,
  useConnectorPlugins,
  useConnectors,
  useConnectorStateChange,
  useCreateConnector,
} from "../api/hooks/connect";
import { useTeams } from "../api/hooks/teams";
import type { Cluster, ConnectCluster, Connector, ConnectorLag, Team } from "../api/types";
import { isOrgAdmin } from "../auth/permissions";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { SelectField, TextField, choicesOf } from "../components/FormFields";
import { PageHeader } from "../components/PageHeader";
import { EmptyState, QueryView } from "../components/states";
import { connectorErrorsOf, parseProperties } from "./connect/connectorConfig";

const column = createColumnHelper<Connector>();

function ConnectorForm({
  connectClusters,
  teams,
  onDone,
}: {
  connectClusters: ConnectCluster[];
  teams: Team[];
  onDone: () => void;
}) {
  const [connectCluster, setConnectCluster] = useState<number | "">(connectClusters[0]?.id ?? "");
  const [team, setTeam] = useState<number | "">(teams[0]?.id ?? "");
  const [name, setName] = useState("");
  const [connectorClass, setConnectorClass] = useState("");
  const [config, setConfig] = useState("");
  const [secrets, setSecrets] = useState("");
  const plugins = useConnectorPlugins(connectCluster);
  const create = useCreateConnector();
  const errors = connectorErrorsOf(create.error);
  const allowed = (plugins.data ?? []).filter((plugin) => plugin.allowed);

  return (
    <form
      className="form"
      onSubmit={(event) => {
        event.preventDefault();
        if (connectCluster === "" || team === "") return;
        create.mutate(
          {
            connect_cluster: connectCluster,
            team,
            name,
            config: { ...parseProperties(config), "connector.class": connectorClass },
            secrets: parseProperties(secrets),
            validate_only: false,
          },
          { onSuccess: onDone },
        );
      }}
    >
      <SelectField
        label="Connect cluster"
        value={connectCluster}
        choices={choicesOf(connectClusters)}
        onChange={setConnectCluster}
      />
      <SelectField label="Team" value={team} choices={choicesOf(teams)} onChange={setTeam} />
      <TextField label="Name" value={name} onChange={setName} hint="Starts with one of the team's group prefixes." />
      <SelectField
        label="Connector class"
        value={connectorClass}
        emptyLabel="Choose a plugin"
        choices={allowed.map((plugin) => [plugin.class, `${plugin.class} (${plugin.version})`] as const)}
        onChange={setConnectorClass}
        error={errors.fields["connector.class"]}
      />
      <label className="field">
        <span className="field__label">Config (key=value per line)</span>
        <textarea
          className="input mono"
          aria-label="Config"
          rows={8}
          value={config}
          onChange={(event) => setConfig(event.target.value)}
        />
      </label>
      <label className="field">
        <span className="field__label">Secrets (key=value per line; stored apart, never shown again)</span>
        <textarea
          className="input mono"
          aria-label="Secrets"
          rows={2}
          value={secrets}
          onChange={(event) => setSecrets(event.target.value)}
        />
      </label>
      {Object.keys(errors.fields).length > 0 ? (
        <ul className="form__errors" aria-label="Config errors">
          {Object.entries(errors.fields).map(([key, message]) => (
            <li key={key} className="field__error" data-field={key}>
              <span className="mono">{key}</span>: {message}
            </li>
          ))}
        </ul>
      ) : null}
      {errors.form ? (
        <p role="alert" className="form__error">
          {errors.form}
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="button button--primary" disabled={create.isPending}>
          Create connector
        </button>
      </div>
    </form>
  );
}

/** An org admin attaches a Connect cluster to one of the organization's clusters. */
function AttachConnectClusterForm({ clusters, onDone }: { clusters: Cluster[]; onDone: () => void }) {
  const [cluster, setCluster] = useState<number | "">(clusters[0]?.id ?? "");
  const [name, setName] = useState("");
  const [workers, setWorkers] = useState<number>(1);
  const [fileDirectory, setFileDirectory] = useState("");
  const attach = useAttachConnectCluster();
  return (
    <form
      className="form"
      onSubmit={(event) => {
        event.preventDefault();
        if (cluster === "") return;
        attach.mutate(
          {
            cluster,
            name,
            worker_count: workers,
            max_tasks_per_team: 8,
            allowed_plugins: [],
            file_directory: fileDirectory,
          },
          { onSuccess: onDone },
        );
      }}
    >
      <SelectField label="Kafka cluster" value={cluster} choices={choicesOf(clusters)} onChange={setCluster} />
      <TextField label="Name" value={name} onChange={setName} />
      <SelectField
        label="Workers"
        value={workers}
        choices={[
          [1, "1"],
          [2, "2"],
          [3, "3"],
        ]}
        onChange={setWorkers}
      />
      <TextField
        label="File directory (the only place connectors may read or write files; empty: none)"
        value={fileDirectory}
        onChange={setFileDirectory}
      />
      {attach.error ? (
        <p role="alert" className="form__error">
          {describeError(attach.error)}
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="button button--primary" disabled={attach.isPending}>
          {attach.isPending ? "Starting workers…" : "Attach"}
        </button>
      </div>
    </form>
  );
}

function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined) return "unknown";
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

/** The last lag sampling run's view of the connector: a sink's consumer group, a CDC connector's source. */
function ConnectorLagView({ lag }: { lag: ConnectorLag | undefined }) {
  if (!lag || lag.kind === "none") return <p data-testid="connector-lag">Lag: not sampled yet.</p>;
  if (lag.kind === "consumer_group") {
    return (
      <p data-testid="connector-lag">
        Consumer lag: {lag.lag_messages ?? 0} messages ({lag.status}) of group{" "}
        <Link to={`/groups/${lag.group_id}`} className="mono">
          {lag.group}
        </Link>
      </p>
    );
  }
  if (lag.error) return <p data-testid="connector-lag">Source lag unknown: {lag.error}</p>;
  return (
    <p data-testid="connector-lag">
      Source lag: {bytes(lag.lag_bytes)} of WAL — database at <span className="mono">{lag.current_lsn}</span>, topics
      hold changes up to <span className="mono">{lag.committed_lsn || "none yet"}</span> (slot{" "}
      <span className="mono">{lag.slot_name}</span> keeps {bytes(lag.slot_retained_bytes)});{" "}
      <span data-testid="connector-topic-records">{lag.topic_records ?? 0}</span> records in its topics.
    </p>
  );
}

function ConnectorStatus({ id }: { id: number }) {
  const detail = useConnector(id);
  const status = detail.data?.status as
    | { state?: string; trace?: string; tasks?: { id: number; state: string; worker: string; trace: string }[] }
    | undefined;
  if (!status) return null;
  return (
    <section aria-label="Connector status" className="panel">
      <h2>
        {detail.data?.name}: <span data-testid="connector-state">{status.state}</span>
      </h2>
      <ConnectorLagView lag={detail.data?.lag} />
      <ul>
        {(status.tasks ?? []).map((task) => (
          <li key={task.id}>
            Task {task.id}: {task.state} <span className="mono">{task.worker}</span>
            {task.trace ? <pre className="mono">{task.trace}</pre> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function ConnectorsPage() {
  const connectClusters = useConnectClusters();
  const connectors = useConnectors();
  const teams = useTeams();
  const stateChange = useConnectorStateChange();
  const clusters = useClusters();
  const access = useAccess();
  const [creating, setCreating] = useState(false);
  const [attaching, setAttaching] = useState(false);
  const [shown, setShown] = useState<number | null>(null);

  const accessData = access.data;
  const adminClusters = (clusters.data ?? []).filter(
    (cluster) => accessData !== undefined && isOrgAdmin(accessData, cluster.organization),
  );

  const columns = [
    column.accessor("name", {
      header: "Name",
      cell: (info) => (
        <button type="button" className="link mono" onClick={() => setShown(info.row.original.id)}>
          {info.getValue()}
        </button>
      ),
    }),
    column.accessor("connector_class", {
      header: "Class",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    column.accessor("desired_state", {
      header: "Desired state",
      cell: (info) => (
        <span className={info.getValue() === "running" ? "badge badge--ok" : "badge badge--info"}>
          {info.getValue()}
        </span>
      ),
    }),
    column.display({
      id: "actions",
      header: () => <span className="visually-hidden">Actions</span>,
      cell: (info) => {
        const connector = info.row.original;
        const pause = connector.desired_state === "running";
        return (
          <button
            type="button"
            className="button"
            aria-label={`${pause ? "Pause" : "Resume"} ${connector.name}`}
            onClick={() => stateChange.mutate({ id: connector.id, pause })}
          >
            {pause ? "Pause" : "Resume"}
          </button>
        );
      },
    }),
  ];

  return (
    <>
      <PageHeader
        title="Connectors"
        description="Kafka Connect source and sink connectors of your teams, on the Connect clusters of your organization."
        actions={
          <>
            {adminClusters.length > 0 ? (
              <button type="button" className="button" onClick={() => setAttaching(true)}>
                Attach Connect cluster
              </button>
            ) : null}
            {(connectClusters.data ?? []).length > 0 ? (
              <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
                New connector
              </button>
            ) : null}
          </>
        }
      />
      <QueryView query={combineQueries(connectClusters)} errorTitle="Could not load the Connect clusters">
        {([clusterList]) => (
          <ul aria-label="Connect clusters" className="panel">
            {clusterList.map((cluster) => (
              <li key={cluster.id}>
                <strong>{cluster.name}</strong>: {cluster.status}, {cluster.workers.length}{" "}
                {cluster.workers.length === 1 ? "worker" : "workers"} (
                {cluster.workers.map((worker) => worker.status).join(", ")})
              </li>
            ))}
          </ul>
        )}
      </QueryView>
      <QueryView
        query={combineQueries(connectors)}
        errorTitle="Could not load the connectors"
        isEmpty={([list]) => list.length === 0}
        empty={<EmptyState title="No connectors yet" description="Create one to stream data in or out of topics." />}
      >
        {([list]) => (
          <DataTable
            label="Connectors"
            columns={columns}
            rows={list}
            getRowId={(row) => String(row.id)}
            filterPlaceholder="Filter connectors…"
          />
        )}
      </QueryView>
      {shown !== null ? <ConnectorStatus id={shown} /> : null}
      <Dialog open={attaching} title="Attach Connect cluster" onClose={() => setAttaching(false)}>
        <AttachConnectClusterForm clusters={adminClusters} onDone={() => setAttaching(false)} />
      </Dialog>
      <Dialog open={creating} title="New connector" onClose={() => setCreating(false)}>
        <ConnectorForm
          connectClusters={connectClusters.data ?? []}
          teams={teams.data ?? []}
          onDone={() => setCreating(false)}
        />
      </Dialog>
    </>
  );
}
