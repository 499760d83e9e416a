import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";

import { combineQueries } from "../api/combineQueries";
import { describeError } from "../api/errors";
import { useClusters } from "../api/hooks/clusters";
import { useConnectClusters } from "../api/hooks/connect";
import {
  useCreateReplicationFlow,
  useDeleteReplicationFlow,
  useFailOverGroup,
  useReplicationFlow,
  useReplicationFlowStateChange,
  useReplicationFlows,
  useReplicationLag,
  useSetLagAlertRecords,
} from "../api/hooks/replicationFlows";
import { useTeams } from "../api/hooks/teams";
import type { Cluster, ConnectCluster, ReplicationFlow, Team } from "../api/types";
import { TimeSeriesChart, formatCompact } from "../components/charts";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { SelectField, TextField, choicesOf } from "../components/FormFields";
import { PageHeader } from "../components/PageHeader";
import { EmptyState, QueryView } from "../components/states";

const column = createColumnHelper<ReplicationFlow>();

function FlowForm({
  clusters,
  connectClusters,
  teams,
  onDone,
}: {
  clusters: Cluster[];
  connectClusters: ConnectCluster[];
  teams: Team[];
  onDone: () => void;
}) {
  const [team, setTeam] = useState<number | "">(teams[0]?.id ?? "");
  const [name, setName] = useState("");
  const [source, setSource] = useState<number | "">(clusters[0]?.id ?? "");
  const [target, setTarget] = useState<number | "">(clusters[1]?.id ?? "");
  const [topics, setTopics] = useState("");
  const [groups, setGroups] = useState("");
  const [policy, setPolicy] = useState<"default" | "identity">("default");
  const [interval, setInterval] = useState("60");
  const [alertRecords, setAlertRecords] = useState("0");
  const create = useCreateReplicationFlow();
  // MM2 produces locally: the Connect cluster must be attached to the target.
  const onTarget = connectClusters.filter((connectCluster) => connectCluster.cluster === target);
  const fields = (create.error as { details?: { fields?: Record<string, string[]> } } | null)?.details?.fields ?? {};
  const fieldError = (key: string) => fields[key]?.join(" ");

  return (
    <form
      className="form"
      onSubmit={(event) => {
        event.preventDefault();
        const connectCluster = onTarget[0];
        if (team === "" || source === "" || target === "" || connectCluster === undefined) return;
        create.mutate(
          {
            team,
            name,
            source_cluster: source,
            target_cluster: target,
            connect_cluster: connectCluster.id,
            topics_pattern: topics,
            groups_pattern: groups,
            source_alias: "",
            replication_policy: policy,
            sync_topic_configs: true,
            sync_topic_acls: false,
            sync_group_offsets: true,
            checkpoint_interval_seconds: Number(interval),
            offset_lag_max: 100,
            lag_alert_records: Number(alertRecords),
          },
          { onSuccess: onDone },
        );
      }}
    >
      <SelectField label="Team" value={team} choices={choicesOf(teams)} onChange={setTeam} />
      <TextField
        label="Name"
        value={name}
        onChange={setName}
        hint="Also the source alias: replicas are named <name>.<topic>."
        error={fieldError("name")}
      />
      <SelectField label="Source cluster" value={source} choices={choicesOf(clusters)} onChange={setSource} />
      <SelectField
        label="Target cluster"
        value={target}
        choices={choicesOf(clusters)}
        onChange={setTarget}
        error={onTarget.length === 0 ? "No Connect cluster is attached to this cluster." : fieldError("target_cluster")}
      />
      <TextField
        label="Topics pattern"
        value={topics}
        onChange={setTopics}
        hint="A regular expression starting with one of the team's topic prefixes, dots escaped."
        error={fieldError("topics_pattern")}
      />
      <TextField
        label="Groups pattern"
        value={groups}
        onChange={setGroups}
        hint="Consumer groups whose offsets are translated for failover (optional)."
        error={fieldError("groups_pattern")}
      />
      <SelectField
        label="Replica names"
        value={policy}
        choices={[
          ["default", "Prefixed with the source alias"],
          ["identity", "Same as the source"],
        ]}
        onChange={setPolicy}
      />
      <TextField
        label="Checkpoint interval (s)"
        value={interval}
        onChange={setInterval}
        error={fieldError("checkpoint_interval_seconds")}
      />
      <TextField
        label="Lag alert threshold (records)"
        value={alertRecords}
        onChange={setAlertRecords}
        hint="A replication-lag alert rule fires when a partition's replica stays this far behind (0: the rule's threshold)."
        error={fieldError("lag_alert_records")}
      />
      {create.error ? (
        <p role="alert" className="form__error">
          {describeError(create.error)}
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="button button--primary" disabled={create.isPending}>
          {create.isPending ? "Starting MirrorMaker 2…" : "Create flow"}
        </button>
      </div>
    </form>
  );
}

const ALERT_BADGES: Record<string, string> = {
  firing: "badge badge--danger",
  pending: "badge badge--warning",
  ok: "badge badge--ok",
};

function LagAlertThreshold({ id, current }: { id: number; current: number }) {
  const [records, setRecords] = useState(String(current));
  const update = useSetLagAlertRecords();
  const fields = (update.error as { details?: { fields?: Record<string, string[]> } } | null)?.details?.fields ?? {};
  return (
    <form
      className="form"
      onSubmit={(event) => {
        event.preventDefault();
        update.mutate({ id, records: Number(records) });
      }}
    >
      <TextField
        label="Lag alert threshold (records)"
        value={records}
        onChange={setRecords}
        hint="0: the alert rule's threshold applies."
        error={fields.lag_alert_records?.join(" ") ?? (update.error ? describeError(update.error) : undefined)}
      />
      <div className="actions">
        <button type="submit" className="button" disabled={update.isPending}>
          Save threshold
        </button>
      </div>
    </form>
  );
}

function FlowDetail({ id }: { id: number }) {
  const detail = useReplicationFlow(id);
  const lag = useReplicationLag(id);
  const failOver = useFailOverGroup();
  const [group, setGroup] = useState("");
  const history = detail.data?.lag_history ?? [];
  const connectors = (detail.data?.connectors ?? {}) as Record<
    string,
    { state: string; tasks: { id: number; state: string; trace: string }[] }
  >;
  return (
    <section aria-label="Replication flow" className="panel">
      <h2>
        {detail.data?.name}: <span data-testid="flow-state">{detail.data?.state}</span>
      </h2>
      <p>
        Lag alert:{" "}
        <span data-testid="flow-alert-state" className={ALERT_BADGES[detail.data?.alert_state ?? "ok"]}>
          {detail.data?.alert_state}
        </span>
      </p>
      {(detail.data?.alerts ?? []).length > 0 ? (
        <ul aria-label="Lag alerts">
          {(detail.data?.alerts ?? []).map((alert) => (
            <li key={alert.id}>
              <span className={ALERT_BADGES[alert.state] ?? "badge"}>{alert.state}</span> {alert.rule_name}:{" "}
              {alert.reason}
            </li>
          ))}
        </ul>
      ) : null}
      {detail.data ? (
        <LagAlertThreshold key={detail.data.lag_alert_records} id={id} current={detail.data.lag_alert_records ?? 0} />
      ) : null}
      <TimeSeriesChart
        label="Replication lag in records"
        timestamps={history.map((sample) => Date.parse(sample.observed_at))}
        series={[
          { label: "All partitions", values: history.map((sample) => sample.lag_records ?? null) },
          { label: "Worst partition", values: history.map((sample) => sample.max_partition_lag_records ?? null) },
        ]}
        formatValue={formatCompact}
        emptyTitle="No lag sampled yet"
      />
      <ul aria-label="Connectors">
        {Object.entries(connectors).map(([kind, connector]) => (
          <li key={kind}>
            {kind}: <span data-testid={`connector-${kind}`}>{connector.state}</span>
            {connector.tasks.map((task) =>
              task.trace ? (
                <pre key={task.id} className="mono">
                  {task.trace}
                </pre>
              ) : null,
            )}
          </li>
        ))}
      </ul>
      <table className="table" aria-label="Lag per partition">
        <thead>
          <tr>
            <th>Topic</th>
            <th>Partition</th>
            <th>Replica</th>
            <th>Source end</th>
            <th>Replica end</th>
            <th>Lag (records)</th>
            <th>Lag (ms)</th>
          </tr>
        </thead>
        <tbody>
          {(lag.data ?? []).map((row) => (
            <tr key={`${row.topic}-${row.partition}`}>
              <td className="mono">{row.topic}</td>
              <td>{row.partition}</td>
              <td className="mono">{row.replica_topic}</td>
              <td>{row.source_end_offset}</td>
              <td>{row.replica_end_offset}</td>
              <td>{row.lag_records}</td>
              <td>{row.lag_ms}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          failOver.mutate({ id, group });
        }}
      >
        <TextField
          label="Consumer group to fail over"
          value={group}
          onChange={setGroup}
          hint="Stop its consumers on the target first."
        />
        <div className="actions">
          <button type="submit" className="button" disabled={failOver.isPending}>
            Fail over group
          </button>
        </div>
        {failOver.error ? (
          <p role="alert" className="form__error">
            {describeError(failOver.error)}
          </p>
        ) : null}
        {failOver.data ? (
          <p role="status">
            Committed on the target:{" "}
            {failOver.data.offsets.map((row) => `${row.topic}[${row.partition}]@${row.offset}`).join(", ")}
          </p>
        ) : null}
      </form>
    </section>
  );
}

export function ReplicationPage() {
  const flows = useReplicationFlows();
  const clusters = useClusters();
  const connectClusters = useConnectClusters();
  const teams = useTeams();
  const stateChange = useReplicationFlowStateChange();
  const remove = useDeleteReplicationFlow();
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<number | null>(null);

  const columns = [
    column.accessor("name", {
      header: "Name",
      cell: (info) => (
        <button type="button" className="link mono" onClick={() => setShown(info.row.original.id)}>
          {info.getValue()}
        </button>
      ),
    }),
    column.accessor("topics_pattern", {
      header: "Topics",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    column.accessor("state", {
      header: "State",
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
        const flow = info.row.original;
        const pause = flow.state === "running";
        return (
          <>
            <button
              type="button"
              className="button"
              aria-label={`${pause ? "Pause" : "Resume"} ${flow.name}`}
              onClick={() => stateChange.mutate({ id: flow.id, pause })}
            >
              {pause ? "Pause" : "Resume"}
            </button>{" "}
            <button
              type="button"
              className="button button--danger"
              aria-label={`Delete ${flow.name}`}
              onClick={() => {
                if (window.confirm(`Delete flow ${flow.name}? Its replica topics stay.`)) {
                  remove.mutate({ id: flow.id, deleteReplicaTopics: false });
                  if (shown === flow.id) setShown(null);
                }
              }}
            >
              Delete
            </button>
          </>
        );
      },
    }),
  ];

  return (
    <>
      <PageHeader
        title="Replication"
        description="MirrorMaker 2 flows copying your teams' topics and consumer group offsets to another cluster."
        actions={
          (connectClusters.data ?? []).length > 0 ? (
            <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
              New flow
            </button>
          ) : null
        }
      />
      <QueryView
        query={combineQueries(flows)}
        errorTitle="Could not load the replication flows"
        isEmpty={([list]) => list.length === 0}
        empty={
          <EmptyState title="No replication flows yet" description="Create one to copy topics to another cluster." />
        }
      >
        {([list]) => (
          <DataTable
            label="Replication flows"
            columns={columns}
            rows={list}
            getRowId={(row) => String(row.id)}
            filterPlaceholder="Filter flows…"
          />
        )}
      </QueryView>
      {shown !== null ? <FlowDetail id={shown} /> : null}
      <Dialog open={creating} title="New replication flow" onClose={() => setCreating(false)}>
        <FlowForm
          clusters={clusters.data ?? []}
          connectClusters={connectClusters.data ?? []}
          teams={teams.data ?? []}
          onDone={() => setCreating(false)}
        />
      </Dialog>
    </>
  );
}
