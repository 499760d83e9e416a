import type { LagStatus } from "../../api/hooks/lag";

const TONE: Record<LagStatus, string> = {
  OK: "badge badge--ok",
  LAGGING: "badge badge--warning",
  NO_COMMIT: "badge badge--info",
  REWIND: "badge badge--warning",
  STALLED: "badge badge--danger",
  STOPPED: "badge",
  DATA_LOSS: "badge badge--danger",
};

const LABEL: Record<LagStatus, string> = {
  OK: "OK",
  LAGGING: "lagging",
  NO_COMMIT: "no commit",
  REWIND: "rewind",
  STALLED: "stalled",
  STOPPED: "stopped",
  DATA_LOSS: "data loss",
};

export function LagStatusBadge({ status, reason }: { status: LagStatus | undefined; reason?: string }) {
  if (status === undefined) return <span className="badge">unknown</span>;
  return (
    <span className={TONE[status]} title={reason || undefined}>
      {LABEL[status]}
    </span>
  );
}
