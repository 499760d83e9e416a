import type { StreamingJobState } from "../../api/hooks/jobs";

const STATE_TONE: Record<StreamingJobState, string> = {
  starting: "badge badge--info",
  running: "badge badge--ok",
  restarting: "badge badge--warning",
  stopping: "badge",
  stopped: "badge",
  failed: "badge badge--danger",
};

export function StreamStateBadge({ state }: { state: StreamingJobState }) {
  return <span className={STATE_TONE[state]}>{state}</span>;
}
