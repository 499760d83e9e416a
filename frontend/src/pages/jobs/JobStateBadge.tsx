import type { JobRunState } from "../../api/hooks/jobs";

const TONE: Record<JobRunState, string> = {
  queued: "badge",
  running: "badge badge--info",
  succeeded: "badge badge--ok",
  failed: "badge badge--danger",
  cancelled: "badge badge--warning",
};

export function JobStateBadge({ state }: { state: JobRunState }) {
  return <span className={TONE[state]}>{state}</span>;
}
