import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { FailOver, ReplicationFlow, ReplicationFlowCreate, ReplicationFlowDetail, ReplicationLag } from "../types";

export const replicationKeys = {
  all: ["replication"] as const,
  flows: () => [...replicationKeys.all, "flows"] as const,
  flow: (id: number) => [...replicationKeys.all, "flow", id] as const,
  lag: (id: number) => [...replicationKeys.all, "lag", id] as const,
};

export function useReplicationFlows() {
  return useQuery({
    queryKey: replicationKeys.flows(),
    queryFn: ({ signal }): Promise<ReplicationFlow[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/replication-flows/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

/** One flow with Connect's live state of its three connectors, refreshed while the page shows it. */
export function useReplicationFlow(id: number | null) {
  return useQuery({
    queryKey: replicationKeys.flow(id ?? 0),
    enabled: id !== null,
    refetchInterval: 3000,
    queryFn: async ({ signal }): Promise<ReplicationFlowDetail> =>
      unwrap(await apiClient.GET("/api/v1/replication-flows/{id}/", { params: { path: { id: id ?? 0 } }, signal })),
  });
}

/** Lag per partition (source end offset against the replica's), refreshed every 3 s. */
export function useReplicationLag(id: number | null) {
  return useQuery({
    queryKey: replicationKeys.lag(id ?? 0),
    enabled: id !== null,
    refetchInterval: 3000,
    queryFn: async ({ signal }): Promise<ReplicationLag> =>
      unwrap(await apiClient.GET("/api/v1/replication-flows/{id}/lag/", { params: { path: { id: id ?? 0 } }, signal })),
  });
}

export function useCreateReplicationFlow() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ReplicationFlowCreate): Promise<ReplicationFlow> =>
      unwrap(await apiClient.POST("/api/v1/replication-flows/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: replicationKeys.all }),
  });
}

export function useReplicationFlowStateChange() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, pause }: { id: number; pause: boolean }): Promise<ReplicationFlow> =>
      pause
        ? unwrap(await apiClient.POST("/api/v1/replication-flows/{id}/pause/", { params: { path: { id } } }))
        : unwrap(await apiClient.POST("/api/v1/replication-flows/{id}/resume/", { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: replicationKeys.all }),
  });
}

/** Changes the flow's lag alert threshold (records a partition's replica may be behind; 0: the rule's). */
export function useSetLagAlertRecords() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, records }: { id: number; records: number }): Promise<ReplicationFlow> =>
      unwrap(
        await apiClient.PATCH("/api/v1/replication-flows/{id}/", {
          params: { path: { id } },
          body: { lag_alert_records: records },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: replicationKeys.all }),
  });
}

export function useDeleteReplicationFlow() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, deleteReplicaTopics }: { id: number; deleteReplicaTopics: boolean }) =>
      unwrap(
        await apiClient.DELETE("/api/v1/replication-flows/{id}/", {
          params: { path: { id }, query: { delete_replica_topics: deleteReplicaTopics ? "true" : "false" } },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: replicationKeys.all }),
  });
}

export function useFailOverGroup() {
  return useMutation({
    mutationFn: async ({ id, group }: { id: number; group: string }): Promise<FailOver> =>
      unwrap(
        await apiClient.POST("/api/v1/replication-flows/{id}/fail-over-group/", {
          params: { path: { id } },
          body: { group },
        }),
      ),
  });
}
