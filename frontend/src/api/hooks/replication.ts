import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { paths } from "../schema";
import type { AcceptedOperation } from "../types";
import { clusterKeys, operationKeys } from "./clusters";

type ReassignmentsPath = paths["/api/v1/clusters/{id}/reassignments/"];
export type Reassignments = ReassignmentsPath["get"]["responses"][200]["content"]["application/json"];
export type PartitionReassignment = Reassignments["partitions"][number];
export type ReassignmentRequest = NonNullable<ReassignmentsPath["post"]["requestBody"]>["content"]["application/json"];
export type ReassignmentStarted = ReassignmentsPath["post"]["responses"][202]["content"]["application/json"];

/** How often moving partitions are asked for their progress; nothing is polled while nothing moves. */
export const REASSIGNMENT_POLL_MS = 2000;

export const reassignmentKeys = {
  forCluster: (cluster: number) => ["reassignments", cluster] as const,
};

export function useReassignments(cluster: number, { enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({
    queryKey: reassignmentKeys.forCluster(cluster),
    enabled,
    queryFn: async ({ signal }): Promise<Reassignments> =>
      unwrap(
        await apiClient.GET("/api/v1/clusters/{id}/reassignments/", { params: { path: { id: cluster } }, signal }),
      ),
    refetchInterval: (query) => ((query.state.data?.partitions.length ?? 0) > 0 ? REASSIGNMENT_POLL_MS : false),
  });
}

export function useStartReassignment(cluster: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ReassignmentRequest): Promise<ReassignmentStarted> =>
      unwrap(await apiClient.POST("/api/v1/clusters/{id}/reassignments/", { params: { path: { id: cluster } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: reassignmentKeys.forCluster(cluster) }),
  });
}

function useFollowOperation(cluster: number) {
  const queryClient = useQueryClient();
  return (accepted: AcceptedOperation) => {
    queryClient.setQueryData(operationKeys.detail(accepted.operation.id), accepted.operation);
    void queryClient.invalidateQueries({ queryKey: operationKeys.forCluster(cluster) });
    return queryClient.invalidateQueries({ queryKey: clusterKeys.detail(cluster) });
  };
}

/** Adds a broker-only node; the returned operation shows its progress. */
export function useAddBroker(cluster: number) {
  const follow = useFollowOperation(cluster);
  return useMutation({
    mutationFn: async (): Promise<AcceptedOperation> =>
      unwrap(await apiClient.POST("/api/v1/clusters/{id}/brokers/", { params: { path: { id: cluster } } })),
    onSuccess: follow,
  });
}

/** Replaces a controller node (dynamic quorums: AddRaftVoter of a new node, RemoveRaftVoter of this one);
 * the node id is repeated as the confirmation. */
export function useReplaceController(cluster: number) {
  const follow = useFollowOperation(cluster);
  return useMutation({
    mutationFn: async (nodeId: number): Promise<AcceptedOperation> =>
      unwrap(
        await apiClient.POST("/api/v1/clusters/{id}/brokers/{node_id}/replace-controller/", {
          params: { path: { id: cluster, node_id: String(nodeId) } },
          body: { confirm_node_id: nodeId },
        }),
      ),
    onSuccess: follow,
  });
}

/** Drains and removes a broker-only node; the node id is repeated as the confirmation. */
export function useRemoveBroker(cluster: number) {
  const follow = useFollowOperation(cluster);
  return useMutation({
    mutationFn: async (nodeId: number): Promise<AcceptedOperation> =>
      unwrap(
        await apiClient.DELETE("/api/v1/clusters/{id}/brokers/{node_id}/", {
          params: { path: { id: cluster, node_id: String(nodeId) } },
          // The API reads the confirmation from the body; the generated schema omits DELETE bodies.
          ...({ body: { confirm_node_id: nodeId } } as object),
        }),
      ),
    onSuccess: follow,
  });
}
