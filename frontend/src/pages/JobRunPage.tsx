import { useState } from "react";
import { Link, useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { describeError } from "../api/errors";
import { useAccess } from "../api/hooks/access";
import {
  FINISHED_RUN_STATES,
  useCancelJobRun,
  useJobRun,
  useJobRunLog,
  type JobRun,
  type LogSource,
} from "../api/hooks/jobs";
import { useTeams } from "../api/hooks/teams";
import { hasRole, roleInTeam } from "../auth/permissions";
import { formatCompact, formatSeconds } from "../components/charts";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { PageHeader } from "../components/PageHeader";
import { Timestamp } from "../components/Timestamp";
import { QueryView } from "../components/states";
import { JobProgressBar } from "./jobs/JobProgressBar";
import { JobResults } from "./jobs/JobResults";
import { JobStateBadge } from "./jobs/JobStateBadge";
import "./jobs/jobs.css";
import { recordsPerSecond } from "./jobs/runMetrics";
import { NotFoundPage } from "./NotFoundPage";

export function JobRunPage() {
  const id = Number(useParams().id);
  if (!Number.isInteger(id) || id <= 0) return <NotFoundPage />;
  return <JobRunView id={id} />;
}

function JobRunView({ id }: { id: number }) {
  const run = useJobRun(id);
  const access = useAccess();
  const teams = useTeams();
  return (
    <QueryView query={combineQueries(run, access, teams)} errorTitle="Could not load the job run">
      {([runData, accessData, teamsData]) => {
        const team = teamsData.find((candidate) => candidate.id === runData.team);
        const canCancel = team !== undefined && hasRole(roleInTeam(accessData, team), "developer");
        return <JobRunSections run={runData} canCancel={canCancel} />;
      }}
    </QueryView>
  );
}

function JobRunSections({ run, canCancel }: { run: JobRun; canCancel: boolean }) {
  const [confirming, setConfirming] = useState(false);
  const cancel = useCancelJobRun(run.id);
  const finished = FINISHED_RUN_STATES.has(run.state);
  const title = `${run.job} #${run.id}`;
  const rate = recordsPerSecond(run);

  return (
    <>
      <PageHeader
        title={title}
        description={
          <>
            <JobStateBadge state={run.state} /> {run.team_name} on {run.cluster_name} · <Link to="/jobs">all runs</Link>
          </>
        }
        actions={
          canCancel && !finished ? (
            <button
              type="button"
              className="button button--danger"
              disabled={run.cancel_requested}
              onClick={() => setConfirming(true)}
            >
              {run.cancel_requested ? "Cancelling…" : "Cancel run"}
            </button>
          ) : null
        }
      />
      <section className="section" aria-labelledby="run-progress">
        <h2 id="run-progress" className="section__title">
          Progress
        </h2>
        <JobProgressBar run={run} />
        {run.reason ? (
          <p className={run.state === "failed" ? "callout callout--danger" : "callout"} role="status">
            {run.reason}
          </p>
        ) : null}
      </section>

      <dl className="details">
        <dt>Service account</dt>
        <dd>{run.service_account_name ?? "—"}</dd>
        <dt>Compute</dt>
        <dd className="mono">{run.compute_target}</dd>
        <dt>Launched</dt>
        <dd>
          <Timestamp value={run.created_at} />
        </dd>
        <dt>Started</dt>
        <dd>{run.started_at ? <Timestamp value={run.started_at} /> : "—"}</dd>
        <dt>Finished</dt>
        <dd>{run.finished_at ? <Timestamp value={run.finished_at} /> : "—"}</dd>
        <dt>Duration</dt>
        <dd>{run.duration_seconds == null ? "—" : formatSeconds(run.duration_seconds)}</dd>
        <dt>Records/s</dt>
        <dd>{rate == null ? "—" : formatCompact(rate)}</dd>
        <dt>Time limit</dt>
        <dd>{formatSeconds(run.time_limit_seconds)}</dd>
      </dl>
      <details className="section">
        <summary>Parameters</summary>
        <pre className="code-block">{JSON.stringify(run.parameters, null, 2)}</pre>
      </details>

      <section className="section" aria-labelledby="run-results">
        <h2 id="run-results" className="section__title">
          Results
        </h2>
        {run.state === "succeeded" ? (
          <JobResults run={run.id} result={run.result} />
        ) : (
          <p className="muted">
            {finished ? "The run ended without results." : "Results appear when the run succeeds."}
          </p>
        )}
      </section>

      <RunLog run={run.id} live={!finished} />

      <ConfirmDialog
        open={confirming}
        title={`Cancel ${title}`}
        description="Its Spark processes are stopped and the run ends as cancelled; partial results are discarded."
        confirmationText={run.job}
        confirmLabel="Cancel run"
        pending={cancel.isPending}
        error={cancel.isError ? describeError(cancel.error) : null}
        onCancel={() => {
          setConfirming(false);
          cancel.reset();
        }}
        onConfirm={() => cancel.mutate(undefined, { onSuccess: () => setConfirming(false) })}
      />
    </>
  );
}

function RunLog({ run, live }: { run: number; live: boolean }) {
  const [source, setSource] = useState<LogSource>("job");
  const log = useJobRunLog(run, live, source);
  return (
    <section className="section" aria-labelledby="run-log">
      <h2 id="run-log" className="section__title">
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
