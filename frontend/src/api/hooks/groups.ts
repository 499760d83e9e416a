import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { paths } from "../schema";
import { lagKeys } from "./lag";

type Json<Response> = Response extends { content: { "application/json": infer Body } } ? Body : never;
type GroupsPath = paths["/api/v1/consumer-groups/"]["get"];

export type ConsumerGroupPage = Json<GroupsPath["responses"][200]>;
export type ConsumerGroup = ConsumerGroupPage["results"][number];
export type ConsumerGroupQuery = NonNullable<GroupsPath["parameters"]["query"]>;
export type OffsetResetInput = NonNullable<
  paths["/api/v1/consumer-groups/{id}/reset-offsets/"]["post"]["requestBody"]
>["content"]["application/json"];
export type ResetStrategy = OffsetResetInput["strategy"];
export type PlannedOffset = Json<
  paths["/api/v1/consumer-groups/{id}/reset-offsets/preview/"]["post"]["responses"][200]
>[number];
export type OffsetReset = Json<paths["/api/v1/consumer-groups/{id}/undo-reset/"]["post"]["responses"][200]>;

/** The group as the cluster describes it now (LiveGroupSerializer; the schema types `live` loosely). */
export interface PartitionLag {
  topic: string;
  partition: number;
  committed_offset: number;
  log_end_offset: number;
  lag: number;
}
export interface GroupMember {
  member_id: string;
  client_id: string;
  host: string;
  assignments: { topic: string; partition: number }[];
}
/** A share-partition: its start offset, the in-flight window up to the log end and how much of it is done. */
export interface SharePartition {
  topic: string;
  partition: number;
  start_offset: number;
  log_end_offset: number;
  in_flight: number;
  acknowledged: number;
  lag: number;
}
export interface GroupConfig {
  name: string;
  value: string | null;
  source: string;
}
export interface StreamsTask {
  subtopology: string;
  partitions: number[];
}
export interface StreamsMember {
  member_id: string;
  client_id: string;
  host: string;
  process_id: string;
  member_epoch: number;
  active_tasks: StreamsTask[];
  standby_tasks: StreamsTask[];
  warmup_tasks: StreamsTask[];
}
export interface Subtopology {
  subtopology_id: string;
  source_topics: string[];
  repartition_sink_topics: string[];
  state_changelog_topics: string[];
  repartition_source_topics: string[];
}
export interface StreamsGroup {
  group_epoch: number;
  topology_epoch: number;
  subtopologies: Subtopology[];
  members: StreamsMember[];
}
export interface LiveGroup {
  state: string;
  protocol: string;
  members: GroupMember[];
  offsets: PartitionLag[];
  total_lag: number;
  share_partitions: SharePartition[];
  share_configs: GroupConfig[];
  streams: StreamsGroup | null;
}
export type GroupType = NonNullable<ConsumerGroup["group_type"]>;
export const GROUP_TYPES: readonly (readonly [GroupType, string])[] = [
  ["classic", "Classic"],
  ["consumer", "Consumer (KIP-848)"],
  ["share", "Share (queue)"],
  ["streams", "Streams"],
];
export type ShareConfigsInput = NonNullable<
  paths["/api/v1/consumer-groups/{id}/share-configs/"]["post"]["requestBody"]
>["content"]["application/json"];
export type ConsumerGroupDetail = Omit<
  Json<paths["/api/v1/consumer-groups/{id}/"]["get"]["responses"][200]>,
  "live"
> & { live: LiveGroup };

export const GROUPS_PAGE_SIZE = 50;
/** Kafka only accepts commits from outside a group while it has no members. */
export const INACTIVE_GROUP_STATES: ReadonlySet<string> = new Set(["EMPTY", "DEAD", "UNKNOWN"]);

export const groupKeys = {
  all: ["consumer-groups"] as const,
  list: (query: ConsumerGroupQuery) => [...groupKeys.all, "list", query] as const,
  detail: (id: number) => [...groupKeys.all, "detail", id] as const,
  resets: (id: number) => [...groupKeys.all, "resets", id] as const,
};

export function useConsumerGroups(query: ConsumerGroupQuery) {
  return useQuery({
    queryKey: groupKeys.list(query),
    queryFn: async ({ signal }): Promise<ConsumerGroupPage> =>
      unwrap(await apiClient.GET("/api/v1/consumer-groups/", { params: { query }, signal })),
    // Filter and page changes keep the old rows on screen until the new ones arrive.
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  });
}

/** A group's detail asks the cluster, so it is refreshed, not cached for long. */
export function useConsumerGroup(id: number) {
  return useQuery({
    queryKey: groupKeys.detail(id),
    queryFn: async ({ signal }): Promise<ConsumerGroupDetail> =>
      unwrap(
        await apiClient.GET("/api/v1/consumer-groups/{id}/", { params: { path: { id } }, signal }),
      ) as unknown as ConsumerGroupDetail,
    refetchInterval: 15_000,
  });
}

export function useOffsetResets(id: number) {
  return useQuery({
    queryKey: groupKeys.resets(id),
    queryFn: async ({ signal }): Promise<OffsetReset[]> =>
      unwrap(await apiClient.GET("/api/v1/consumer-groups/{id}/resets/", { params: { path: { id } }, signal })),
  });
}

export function usePreviewReset(id: number) {
  return useMutation({
    mutationFn: async (body: OffsetResetInput): Promise<PlannedOffset[]> =>
      unwrap(
        await apiClient.POST("/api/v1/consumer-groups/{id}/reset-offsets/preview/", {
          params: { path: { id } },
          body,
        }),
      ),
  });
}

function useGroupChange<Variables, Result>(id: number, change: (variables: Variables) => Promise<Result>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: change,
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: groupKeys.detail(id) }),
        queryClient.invalidateQueries({ queryKey: groupKeys.resets(id) }),
        queryClient.invalidateQueries({ queryKey: [...groupKeys.all, "list"] }),
        // The health summary's lag is the sampler's; asked again it agrees with the table once sampled.
        queryClient.invalidateQueries({ queryKey: lagKeys.group(id) }),
      ]),
  });
}

export function useApplyReset(id: number) {
  return useGroupChange(id, async (body: OffsetResetInput): Promise<OffsetReset> =>
    unwrap(await apiClient.POST("/api/v1/consumer-groups/{id}/reset-offsets/", { params: { path: { id } }, body })),
  );
}

export function useUndoReset(id: number) {
  return useGroupChange(id, async (): Promise<OffsetReset> =>
    unwrap(await apiClient.POST("/api/v1/consumer-groups/{id}/undo-reset/", { params: { path: { id } } })),
  );
}

/** Forgets the group's committed offsets for each topic in turn (OffsetDelete takes one topic per call). */
export function useDeleteGroupOffsets(id: number) {
  return useGroupChange(id, async (topics: string[]): Promise<void> => {
    for (const topic of topics) {
      unwrap(
        await apiClient.POST("/api/v1/consumer-groups/{id}/delete-offsets/", {
          params: { path: { id } },
          body: { topic },
        }),
      );
    }
  });
}

export function useSetShareConfigs(id: number) {
  return useGroupChange(id, async (body: ShareConfigsInput): Promise<void> => {
    unwrap(await apiClient.POST("/api/v1/consumer-groups/{id}/share-configs/", { params: { path: { id } }, body }));
  });
}

export function useDeleteGroup() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/consumer-groups/{id}/", { params: { path: { id } } }));
    },
    onSuccess: (_, id) => {
      queryClient.removeQueries({ queryKey: groupKeys.detail(id) });
      return queryClient.invalidateQueries({ queryKey: [...groupKeys.all, "list"] });
    },
  });
}
