import type { ConsumerGroup, ConsumerGroupDetail, OffsetReset } from "../../api/hooks/groups";

export function consumerGroup(overrides: Partial<ConsumerGroup> = {}): ConsumerGroup {
  return {
    id: 31,
    cluster: 3,
    team: 1,
    name: "payments.billing",
    state: "EMPTY",
    member_count: 0,
    total_lag: 1500,
    observed_at: "2026-01-05T10:00:00Z",
    ...overrides,
  };
}

export function groupDetail(overrides: Partial<ConsumerGroupDetail> = {}): ConsumerGroupDetail {
  return {
    ...consumerGroup(),
    live: {
      state: "EMPTY",
      protocol: "",
      members: [],
      offsets: [
        { topic: "payments.orders", partition: 0, committed_offset: 100, log_end_offset: 1100, lag: 1000 },
        { topic: "payments.orders", partition: 1, committed_offset: 400, log_end_offset: 900, lag: 500 },
      ],
      total_lag: 1500,
    },
    ...overrides,
  };
}

export function offsetReset(overrides: Partial<OffsetReset> = {}): OffsetReset {
  return {
    id: 8,
    group: 31,
    strategy: "earliest",
    parameters: {},
    offsets: [
      { topic: "payments.orders", partition: 0, old_offset: 100, new_offset: 0 },
      { topic: "payments.orders", partition: 1, old_offset: 400, new_offset: 0 },
    ],
    requested_by: "me",
    applied_at: "2026-01-05T11:00:00Z",
    undone_at: null,
    ...overrides,
  };
}
