import type { ConsumerGroup, ConsumerGroupDetail, OffsetReset } from "../../api/hooks/groups";
import type { GroupLagDetail, LagChart } from "../../api/hooks/lag";

export function consumerGroup(overrides: Partial<ConsumerGroup> = {}): ConsumerGroup {
  return {
    id: 31,
    cluster: 3,
    team: 1,
    name: "payments.billing",
    group_type: "classic",
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
      share_partitions: [],
      share_configs: [],
      streams: null,
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

export function groupLag(overrides: Partial<GroupLagDetail> = {}): GroupLagDetail {
  return {
    group: 31,
    cluster: 3,
    team: 1,
    name: "payments.billing",
    status: "STALLED",
    reason: "Committed offset has not moved for 5 min",
    lag_messages: 1500,
    lag_seconds: 120,
    lag_seconds_is_lower_bound: true,
    time_to_catch_up_seconds: null,
    consume_rate: 0,
    produce_rate: 3,
    state: "STABLE",
    member_count: 1,
    observed_at: "2026-01-05T10:00:00Z",
    members: [],
    partitions: [
      {
        topic: "payments.orders",
        partition: 0,
        committed_offset: 100,
        log_start_offset: 0,
        log_end_offset: 1100,
        lag_messages: 1000,
        lag_seconds: 120,
        lag_seconds_is_lower_bound: true,
        consume_rate: 0,
        produce_rate: 3,
        time_to_catch_up_seconds: null,
        status: "STALLED",
        reason: "Committed offset has not moved for 5 min",
      },
    ],
    ...overrides,
  };
}

export function lagChart(overrides: Partial<LagChart> = {}): LagChart {
  return {
    group: 31,
    resolution: "raw",
    since: "2026-01-05T09:00:00Z",
    until: "2026-01-05T10:00:00Z",
    times: ["2026-01-05T09:59:00Z", "2026-01-05T10:00:00Z"],
    total: { lag_messages: [1400, 1500], lag_seconds: [60, 120] },
    partitions: [
      { topic: "payments.orders", partition: 0, lag_messages: [900, 1000], lag_seconds: [60, 120] },
      { topic: "payments.orders", partition: 1, lag_messages: [500, 500], lag_seconds: [null, null] },
    ],
    ...overrides,
  };
}
