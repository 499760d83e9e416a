import { FINISHED_RUN_STATES, type JobRun } from "../../api/hooks/jobs";

const NUMBER = new Intl.NumberFormat();

/**
 * Records read as the job counted them once it succeeded (its `records_read` metric), else Spark's sum
 * over stages: a job that reads its input in two stages makes Spark count every record twice, and the
 * bar said 2,000 where the results said 1,000.
 */
export function recordsRead(run: Pick<JobRun, "state" | "progress" | "result">): number {
  const reported = run.state === "succeeded" ? run.result?.metrics?.records_read : undefined;
  return typeof reported === "number" ? reported : run.progress.records_read;
}

/** What the bar says: waiting, Spark's counts while it runs, or how it ended. */
export function progressText(run: Pick<JobRun, "state" | "progress" | "progress_fraction" | "result">): string {
  const { stages_done, stages_total, tasks_done, tasks_total, records_read } = run.progress;
  const counts = `stages ${stages_done} of ${stages_total} · tasks ${tasks_done} of ${tasks_total} · ${NUMBER.format(records_read)} records read`;
  switch (run.state) {
    case "queued":
      return "Queued: waiting for a Spark worker";
    case "running":
      return tasks_total === 0 ? "Starting Spark…" : `${Math.round(run.progress_fraction * 100)}% · ${counts}`;
    case "succeeded":
      return `Done · ${NUMBER.format(recordsRead(run))} records read`;
    default:
      return `${run.state === "failed" ? "Failed" : "Cancelled"} · ${counts}`;
  }
}

/**
 * A job run's progress from Spark's status API: tasks done of the tasks known so far. Spark plans
 * stages as it goes, so the fraction can step back when a stage is added.
 */
export function JobProgressBar({ run, compact = false }: { run: JobRun; compact?: boolean }) {
  const percent = Math.round((run.state === "succeeded" ? 1 : run.progress_fraction) * 100);
  const text = progressText(run);
  const finished = FINISHED_RUN_STATES.has(run.state);
  return (
    <div className={`job-progress job-progress--${run.state}${compact ? " job-progress--compact" : ""}`}>
      <div
        className="progress"
        role="progressbar"
        aria-label={`Progress of run ${run.id}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        aria-valuetext={text}
        aria-busy={!finished}
      >
        <div
          className={`progress__bar${run.state === "queued" || (run.state === "running" && run.progress.tasks_total === 0) ? " progress__bar--waiting" : ""}`}
          style={{ width: `${percent}%` }}
        />
      </div>
      {compact ? null : <p className="job-progress__text">{text}</p>}
    </div>
  );
}
