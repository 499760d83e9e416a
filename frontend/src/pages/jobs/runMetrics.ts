import type { JobRun } from "../../api/hooks/jobs";

/** The job's own figure once it finished, else records read so far over the time it has run. */
export function recordsPerSecond(run: JobRun): number | null {
  const reported = run.result.metrics.records_per_second;
  if (typeof reported === "number") return reported;
  if (!run.duration_seconds || run.progress.records_read === 0) return null;
  return run.progress.records_read / run.duration_seconds;
}
