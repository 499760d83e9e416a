import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import {
  FINISHED_RUN_STATES,
  JOB_RUNS_PAGE_SIZE,
  useJobCatalog,
  useJobRuns,
  useStreamingCatalog,
  useStreamingJobs,
  type CatalogEntry,
  type JobRun,
  type JobRunQuery,
  type JobRunState,
  type StreamingJob,
} from "../api/hooks/jobs";
import { useTeams } from "../api/hooks/teams";
import type { Team } from "../api/types";
import { hasRole, roleInTeam, type Access } from "../auth/permissions";
import { formatCompact, formatSeconds } from "../components/charts";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { choicesOf, SelectField } from "../components/FormFields";
import { PageHeader } from "../components/PageHeader";
import { Pager } from "../components/Pager";
import { Timestamp } from "../components/Timestamp";
import { EmptyState, QueryView } from "../components/states";
import { JobProgressBar } from "./jobs/JobProgressBar";
import { JobStateBadge } from "./jobs/JobStateBadge";
import { StreamStateBadge } from "./jobs/StreamStateBadge";
import "./jobs/jobs.css";
import { LaunchJobForm } from "./jobs/LaunchJobForm";
import { recordsPerSecond } from "./jobs/runMetrics";

const STATES: JobRunState[] = ["queued", "running", "succeeded", "failed", "cancelled"];

/** Teams whose developers (and admins) may launch jobs. */
export function launchableTeams(access: Access, teams: readonly Team[]): Team[] {
  return teams.filter((team) => hasRole(roleInTeam(access, team), "developer"));
}

function queryFromParams(params: URLSearchParams): JobRunQuery {
  const query: JobRunQuery = { limit: JOB_RUNS_PAGE_SIZE, ordering: "-created_at" };
  const state = params.get("state");
  if (state && (STATES as string[]).includes(state)) query.state = state as JobRunState;
  const job = params.get("job");
  if (job) query.job = job as JobRunQuery["job"];
  for (const name of ["team", "offset"] as const) {
    const value = Number(params.get(name));
    if (Number.isInteger(value) && value > 0) query[name] = value;
  }
  return query;
}

export function JobsPage() {
  const catalog = useJobCatalog();
  const access = useAccess();
  const teams = useTeams();
  const navigate = useNavigate();
  const [launching, setLaunching] = useState<string | null>(null);

  return (
    <>
      <PageHeader
        title="Jobs"
        description="Spark jobs over topic data: launch one from the catalog, watch it run, read its results."
      />
      <QueryView
        query={combineQueries(catalog, access, teams)}
        loadingLabel="Loading the job catalog…"
        errorTitle="Could not load the job catalog"
      >
        {([entries, accessData, teamsData]) => {
          const allowed = launchableTeams(accessData, teamsData);
          return (
            <>
              <Catalog entries={entries} canLaunch={allowed.length > 0} onLaunch={setLaunching} />
              <Dialog
                open={launching !== null}
                title="Launch a job"
                variant="drawer"
                onClose={() => setLaunching(null)}
              >
                {launching !== null ? (
                  <LaunchJobForm
                    catalog={entries}
                    initialJob={launching}
                    teams={allowed}
                    onLaunched={(run) => void navigate(`/jobs/${run.id}`)}
                  />
                ) : null}
              </Dialog>
              <StreamingJobs teams={allowed} />
            </>
          );
        }}
      </QueryView>
      <Runs />
    </>
  );
}

const streamColumn = createColumnHelper<StreamingJob>();
const streamColumns = [
  streamColumn.accessor("name", {
    header: "Stream",
    cell: (info) => (
      <Link to={`/jobs/streams/${info.row.original.id}`} className="mono">
        {info.getValue()}
      </Link>
    ),
  }),
  streamColumn.accessor("job", { header: "Job" }),
  streamColumn.accessor("team_name", { header: "Team" }),
  streamColumn.accessor("state", { header: "State", cell: (info) => <StreamStateBadge state={info.getValue()} /> }),
  streamColumn.accessor((stream) => stream.progress.processed_rows_per_second, {
    id: "rate",
    header: "Records/s",
    cell: (info) => formatCompact(info.getValue()),
  }),
  streamColumn.accessor((stream) => stream.lag.total_lag, { id: "lag", header: "Lag" }),
  streamColumn.accessor("restart_count", { header: "Restarts" }),
];

/** Long-running streaming jobs, created here by a team's developers; each links to its progress and lag. */
function StreamingJobs({ teams }: { teams: Team[] }) {
  const streams = useStreamingJobs();
  const catalog = useStreamingCatalog();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const entries = catalog.data ?? [];
  const canCreate = teams.length > 0 && entries.length > 0;
  if (!streams.data?.count && !canCreate) return null;
  return (
    <section className="section" aria-labelledby="jobs-streams">
      <h2 id="jobs-streams" className="section__title">
        Streaming jobs
      </h2>
      <p className="muted">
        They run until stopped: each micro-batch reads new records, and a failed one restarts from its checkpoint.
      </p>
      {canCreate ? (
        <p>
          <button type="button" className="button" onClick={() => setCreating(true)}>
            New streaming job…
          </button>
        </p>
      ) : null}
      {streams.data?.count ? (
        <DataTable
          label="Streaming jobs"
          columns={streamColumns}
          rows={streams.data.results}
          getRowId={(stream) => String(stream.id)}
          filterable={false}
          pagination={false}
        />
      ) : null}
      <Dialog open={creating} title="Create a streaming job" variant="drawer" onClose={() => setCreating(false)}>
        {creating && entries[0] ? (
          <LaunchJobForm
            kind="stream"
            catalog={entries}
            initialJob={entries[0].job}
            teams={teams}
            onLaunched={(stream) => void navigate(`/jobs/streams/${stream.id}`)}
          />
        ) : null}
      </Dialog>
    </section>
  );
}

function Catalog({
  entries,
  canLaunch,
  onLaunch,
}: {
  entries: CatalogEntry[];
  canLaunch: boolean;
  onLaunch: (job: string) => void;
}) {
  return (
    <section className="section" aria-labelledby="jobs-catalog">
      <h2 id="jobs-catalog" className="section__title">
        Catalog
      </h2>
      {canLaunch ? null : <p className="muted">Developers of a team can launch jobs; you can follow their runs.</p>}
      <ul className="job-catalog">
        {entries.map((entry) => (
          <li key={entry.job} className="job-catalog__item">
            <p className="job-catalog__name mono">{entry.job}</p>
            <p className="job-catalog__description">{entry.description}</p>
            {canLaunch ? (
              <div>
                <button
                  type="button"
                  className="button"
                  aria-label={`Launch ${entry.job}`}
                  onClick={() => onLaunch(entry.job)}
                >
                  Launch…
                </button>
              </div>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

const column = createColumnHelper<JobRun>();
const columns = [
  column.accessor("id", {
    header: "Run",
    cell: (info) => (
      <Link to={`/jobs/${info.getValue()}`} className="mono">
        {info.row.original.job} #{info.getValue()}
      </Link>
    ),
  }),
  column.accessor("team_name", { header: "Team" }),
  column.accessor("cluster_name", { header: "Cluster" }),
  column.accessor("state", { header: "State", cell: (info) => <JobStateBadge state={info.getValue()} /> }),
  column.display({
    id: "progress",
    header: "Progress",
    cell: (info) =>
      FINISHED_RUN_STATES.has(info.row.original.state) ? null : <JobProgressBar run={info.row.original} compact />,
  }),
  column.accessor("created_at", { header: "Launched", cell: (info) => <Timestamp value={info.getValue()} relative /> }),
  column.accessor((run) => run.duration_seconds ?? -1, {
    id: "duration",
    header: "Duration",
    cell: (info) =>
      info.row.original.duration_seconds == null ? "—" : formatSeconds(info.row.original.duration_seconds),
  }),
  column.accessor((run) => recordsPerSecond(run) ?? -1, {
    id: "rate",
    header: "Records/s",
    cell: (info) => {
      const rate = recordsPerSecond(info.row.original);
      return rate == null ? "—" : formatCompact(rate);
    },
  }),
];

function Runs() {
  const [searchParams, setSearchParams] = useSearchParams();
  const query = queryFromParams(searchParams);
  const runs = useJobRuns(query);
  const catalog = useJobCatalog();
  const teams = useTeams();

  function setFilter(name: "state" | "job" | "team" | "offset", value: string) {
    setSearchParams((current) => {
      const params = new URLSearchParams(current);
      if (value && value !== "0") params.set(name, value);
      else params.delete(name);
      if (name !== "offset") params.delete("offset");
      return params;
    });
  }

  return (
    <section className="section" aria-labelledby="jobs-runs">
      <h2 id="jobs-runs" className="section__title">
        Runs
      </h2>
      <div className="filters" role="group" aria-label="Filter runs">
        <SelectField
          label="State"
          value={query.state ?? ""}
          choices={STATES.map((state) => [state, state] as const)}
          emptyLabel="Any state"
          onChange={(state) => setFilter("state", state)}
        />
        <SelectField
          label="Job"
          value={query.job ?? ""}
          choices={(catalog.data ?? []).map((entry) => [entry.job, entry.job] as const)}
          emptyLabel="Any job"
          onChange={(job) => setFilter("job", job)}
        />
        <SelectField
          label="Team"
          value={query.team ?? ""}
          choices={choicesOf(teams.data ?? [])}
          emptyLabel="All teams"
          onChange={(team) => setFilter("team", String(team))}
        />
      </div>
      <QueryView
        query={runs}
        errorTitle="Could not load the job runs"
        isEmpty={(page) => page.count === 0}
        empty={<EmptyState title="No runs yet" description="Launch a job from the catalog to see it here." />}
      >
        {(page) => (
          <>
            <DataTable
              label="Job runs"
              columns={columns}
              rows={page.results}
              getRowId={(run) => String(run.id)}
              filterable={false}
              pagination={false}
            />
            <Pager
              label="Job runs"
              offset={query.offset ?? 0}
              limit={JOB_RUNS_PAGE_SIZE}
              count={page.count}
              onOffsetChange={(offset) => setFilter("offset", String(offset))}
            />
          </>
        )}
      </QueryView>
    </section>
  );
}
