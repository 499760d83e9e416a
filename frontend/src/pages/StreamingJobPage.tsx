import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link, useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { ApiError, describeError } from "../api/errors";
import { useAccess } from "../api/hooks/access";
import {
  useStreamAction,
  useStreamingJob,
  useStreamingJobLog,
  type StreamAction,
  type StreamingJob,
  type LogSource,
} from "../api/hooks/jobs";
import { useTeams } from "../api/hooks/teams";
import { hasRole, roleInTeam } from "../auth/permissions";
import { formatCompact } from "../components/charts";
import { DataTable } from "../components/DataTable";
import { Field } from "../components/Field";
import { PageHeader } from "../components/PageHeader";
import { Timestamp } from "../components/Timestamp";
import { QueryView } from "../components/states";
import "./jobs/jobs.css";
import { StreamStateBadge } from "./jobs/StreamStateBadge";
import { NotFoundPage } from "./NotFoundPage";

const ACTION_LABELS: Record<StreamAction, string> = { start: "Start", stop: "Stop", restart: "Restart" };

type PartitionLag = StreamingJob["lag"]["partitions"][number];
const lagColumn = createColumnHelper<PartitionLag>();
const count = (value: number | null) => (value == null ? "—" : value.toLocaleString("en-US"));
const lagColumns = [
  lagColumn.accessor("topic", { header: "Topic" }),
  lagColumn.accessor("partition", { header: "Partition" }),
  lagColumn.accessor("committed_offset", { header: "Committed", cell: (info) => count(info.getValue()) }),
  lagColumn.accessor("log_end_offset", { header: "Log end", cell: (info) => count(info.getValue()) }),
  lagColumn.accessor("lag_messages", { header: "Lag", cell: (info) => count(info.getValue()) }),
];

export function StreamingJobPage() {
  const id = Number(useParams().id);
  if (!Number.isInteger(id) || id <= 0) return <NotFoundPage />;
  return <StreamingJobView id={id} />;
}

function StreamingJobView({ id }: { id: number }) {
  const stream = useStreamingJob(id);
  const access = useAccess();
  const teams = useTeams();
  return (
    <QueryView query={combineQueries(stream, access, teams)} errorTitle="Could not load the streaming job">
      {([streamData, accessData, teamsData]) => {
        const team = teamsData.find((candidate) => candidate.id === streamData.team);
        const canAct = team !== undefined && hasRole(roleInTeam(accessData, team), "developer");
        return <StreamSections stream={streamData} canAct={canAct} />;
      }}
    </QueryView>
  );
}

function StreamSections({ stream, canAct }: { stream: StreamingJob; canAct: boolean }) {
  const act = useStreamAction(stream.id);
  const [password, setPassword] = useState("");
  // A stop wipes the service account's password: on a SASL cluster the API asks for it again.
  const needsPassword = act.error instanceof ApiError && act.error.code === "credentials";
  const running = stream.desired_state === "running" && stream.state !== "failed";
  const actions: StreamAction[] = running ? ["restart", "stop"] : ["start"];
  const { progress, lag } = stream;
  const lastRestart = stream.restarts.at(-1);
  return (
    <>
      <PageHeader
        title={stream.name}
        description={
          <>
            <StreamStateBadge state={stream.state} /> {stream.job} · {stream.team_name} on {stream.cluster_name} ·{" "}
            <Link to="/jobs">all jobs</Link>
          </>
        }
        actions={
          canAct
            ? actions.map((action) => (
                <button
                  key={action}
                  type="button"
                  className={action === "stop" ? "button button--danger" : "button"}
                  disabled={act.isPending}
                  onClick={() => act.mutate({ action })}
                >
                  {ACTION_LABELS[action]}
                </button>
              ))
            : null
        }
      />
      {act.isError && !needsPassword ? (
        <p className="callout callout--danger" role="alert">
          {describeError(act.error)}
        </p>
      ) : null}
      {needsPassword ? (
        <form
          className="callout"
          aria-label="Start with the service account's password"
          onSubmit={(event) => {
            event.preventDefault();
            act.mutate({ action: "start", password });
          }}
        >
          <p>
            This cluster needs SASL and a stop forgets the password: give the service account's password to start the
            stream again. It is kept encrypted while the stream should run and never shown.
          </p>
          <Field label="Service account password">
            {(control) => (
              <input
                {...control}
                className="input"
                type="password"
                autoComplete="off"
                required
                value={password}
                onChange={(event) => setPassword(event.target.value)}
              />
            )}
          </Field>
          <button type="submit" className="button button--primary" disabled={act.isPending || !password}>
            Start
          </button>
        </form>
      ) : null}
      {stream.reason ? (
        <p className={stream.state === "failed" ? "callout callout--danger" : "callout"} role="status">
          {stream.reason}
        </p>
      ) : null}

      {(stream.state === "stopped" || stream.state === "failed") && progress.batch_id != null ? (
        <p className="muted">
          The figures of its last batch, before it {stream.state === "failed" ? "failed" : "stopped"}.
        </p>
      ) : null}
      <dl className="details" aria-label="Progress">
        <dt>Batch</dt>
        <dd>{progress.batch_id ?? "—"}</dd>
        <dt>Input rows/s</dt>
        <dd>{formatCompact(progress.input_rows_per_second)}</dd>
        <dt>Processed rows/s</dt>
        <dd>{formatCompact(progress.processed_rows_per_second)}</dd>
        <dt>Batch duration</dt>
        <dd>{progress.batch_duration_ms} ms</dd>
        {progress.sink ? (
          <>
            <dt>Topic sink</dt>
            <dd>
              {progress.sink.mode === "transactional"
                ? "exactly-once (one transaction per batch)"
                : "idempotent (the cluster has no transactions)"}
              {progress.sink.last_committed_batch != null
                ? ` · last committed batch ${progress.sink.last_committed_batch}`
                : null}
            </dd>
          </>
        ) : null}
        <dt>Restarts</dt>
        <dd>
          {stream.restart_count}
          {lastRestart ? (
            <>
              {" "}
              · last <Timestamp value={lastRestart.at} relative />: {lastRestart.reason}
            </>
          ) : null}
          {stream.next_restart_at ? (
            <>
              {" "}
              · next start <Timestamp value={stream.next_restart_at} relative />
            </>
          ) : null}
        </dd>
        <dt>Compute</dt>
        <dd className="mono">{stream.compute_target}</dd>
      </dl>

      <section className="section" aria-labelledby="stream-lag">
        <h2 id="stream-lag" className="section__title">
          Consumer lag {lag.partitions.length ? `· ${count(lag.total_lag)} records` : ""}
        </h2>
        {lag.partitions.length === 0 ? (
          <p className="muted">Lag appears once the stream's supervisor has measured it.</p>
        ) : (
          <DataTable
            label="Lag by partition"
            columns={lagColumns}
            rows={lag.partitions}
            getRowId={(row) => `${row.topic}-${row.partition}`}
            filterable={false}
            pagination={false}
          />
        )}
        {lag.sampled_at ? (
          <p className="muted">
            Committed batch {lag.batch_id ?? "—"}, measured <Timestamp value={lag.sampled_at} relative />
            {lag.group ? (
              <>
                {" "}
                · consumer group{" "}
                <Link
                  className="mono"
                  to={`/groups?${new URLSearchParams({ name: lag.group, cluster: String(stream.cluster) }).toString()}`}
                >
                  {lag.group}
                </Link>{" "}
                (its lag history and alerts)
              </>
            ) : null}
          </p>
        ) : null}
      </section>

      <StreamLog id={stream.id} />
    </>
  );
}

function StreamLog({ id }: { id: number }) {
  const [source, setSource] = useState<LogSource>("job");
  const log = useStreamingJobLog(id, source);
  return (
    <section className="section" aria-labelledby="stream-log">
      <h2 id="stream-log" className="section__title">
        Log
      </h2>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={source === "spark"}
          onChange={(event) => setSource(event.target.checked ? "spark" : "job")}
        />{" "}
        Show the driver&apos;s whole log (Spark&apos;s lines too)
      </label>
      <QueryView
        query={log}
        errorTitle="Could not load the log"
        isEmpty={(lines) => lines.length === 0}
        empty={<p className="muted">Nothing logged yet.</p>}
      >
        {(lines) => (
          <pre className="code-block job-log" aria-label="Driver log lines" tabIndex={0}>
            {lines.join("\n")}
          </pre>
        )}
      </QueryView>
    </section>
  );
}
