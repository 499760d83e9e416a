/** Group states as confluent-kafka names them (the sampler stores ConsumerGroupState names). */
export const GROUP_STATES = [
  "STABLE",
  "EMPTY",
  "PREPARING_REBALANCING",
  "COMPLETING_REBALANCING",
  "DEAD",
  "UNKNOWN",
] as const;

const TONE: Record<string, string> = {
  STABLE: "badge badge--ok",
  EMPTY: "badge",
  PREPARING_REBALANCING: "badge badge--info",
  COMPLETING_REBALANCING: "badge badge--info",
  DEAD: "badge badge--danger",
};

/** "PREPARING_REBALANCING" → "preparing rebalancing". */
export function stateLabel(state: string): string {
  return state ? state.toLowerCase().replaceAll("_", " ") : "not sampled yet";
}

export function GroupStateBadge({ state }: { state: string | undefined }) {
  return <span className={TONE[state ?? ""] ?? "badge"}>{stateLabel(state ?? "")}</span>;
}
