import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type {
  AcceptedOperation,
  BrokerDetail,
  Cluster,
  ClusterCreate,
  ClusterDetail,
  ClusterRegister,
  Engine,
  Operation,
} from "../types";

export const clusterKeys = {
  all: ["clusters"] as const,
  list: () => [...clusterKeys.all, "list"] as const,
  detail: (id: number) => [...clusterKeys.all, "detail", id] as const,
};

export const operationKeys = {
  all: ["operations"] as const,
  forCluster: (cluster: number) => [...operationKeys.all, "cluster", cluster] as const,
  topicChanges: () => [...operationKeys.all, "topic-changes"] as const,
  detail: (id: number) => [...operationKeys.all, "detail", id] as const,
};

/** How often a running operation is asked for its progress. */
export const OPERATION_POLL_MS = 1000;
/** Operations in these states will not change any more. */
export const FINISHED_OPERATION_STATES: ReadonlySet<string> = new Set(["succeeded", "failed"]);
/** Clusters in these states are on their way somewhere, so their pages refresh. */
const CHANGING_CLUSTER_STATES: ReadonlySet<string> = new Set(["requested", "provisioning", "deleting"]);

export function isFinished(operation: Operation): boolean {
  return FINISHED_OPERATION_STATES.has(operation.state ?? "pending");
}

export function useClusters() {
  return useQuery({
    queryKey: clusterKeys.list(),
    queryFn: ({ signal }): Promise<Cluster[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/clusters/", { params: { query: { offset, limit } }, signal })),
      ),
    refetchInterval: (query) =>
      query.state.data?.some((cluster) => CHANGING_CLUSTER_STATES.has(cluster.status)) ? 5000 : false,
  });
}

export function useCluster(id: number) {
  return useQuery({
    queryKey: clusterKeys.detail(id),
    queryFn: async ({ signal }): Promise<ClusterDetail> =>
      unwrap(await apiClient.GET("/api/v1/clusters/{id}/", { params: { path: { id } }, signal })),
    refetchInterval: (query) => (CHANGING_CLUSTER_STATES.has(query.state.data?.status ?? "") ? 3000 : false),
  });
}

/** The cluster's operations, newest first (one page is plenty for "recent"). */
export function useClusterOperations(cluster: number) {
  return useQuery({
    queryKey: operationKeys.forCluster(cluster),
    queryFn: async ({ signal }): Promise<Operation[]> =>
      unwrap(
        await apiClient.GET("/api/v1/operations/", {
          params: { query: { cluster, ordering: "-created_at", limit: 10 } },
          signal,
        }),
      ).results,
  });
}

/**
 * Changes to the caller's topics whose outcome the cluster has not confirmed yet (the API answered 202),
 * polled while any is running: reading a running one makes the control plane look at the cluster again.
 */
export function useRunningTopicChanges() {
  return useQuery({
    queryKey: operationKeys.topicChanges(),
    queryFn: async ({ signal }): Promise<Operation[]> =>
      unwrap(
        await apiClient.GET("/api/v1/operations/", {
          params: { query: { resource_type: "topic", state: "running", ordering: "-created_at", limit: 20 } },
          signal,
        }),
      ).results,
    refetchInterval: (query) => ((query.state.data ?? []).length > 0 ? 2000 : 15000),
  });
}

/**
 * One operation, polled every second until it has finished. When it
 * finishes, the cluster it changed is refetched so its status follows.
 */
export function useOperation(id: number | null) {
  const queryClient = useQueryClient();
  return useQuery({
    queryKey: operationKeys.detail(id ?? 0),
    enabled: id !== null,
    queryFn: async ({ signal }): Promise<Operation> => {
      const operation = unwrap(
        await apiClient.GET("/api/v1/operations/{id}/", { params: { path: { id: id ?? 0 } }, signal }),
      );
      if (isFinished(operation)) {
        void queryClient.invalidateQueries({ queryKey: clusterKeys.all });
        void queryClient.invalidateQueries({ queryKey: operationKeys.forCluster(operation.cluster) });
      }
      return operation;
    },
    staleTime: 0,
    refetchInterval: (query) => (query.state.data && isFinished(query.state.data) ? false : OPERATION_POLL_MS),
  });
}

export function useCreateCluster() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ClusterCreate): Promise<AcceptedOperation> =>
      unwrap(await apiClient.POST("/api/v1/clusters/", { body })),
    onSuccess: (accepted) => {
      queryClient.setQueryData(operationKeys.detail(accepted.operation.id), accepted.operation);
      return queryClient.invalidateQueries({ queryKey: clusterKeys.list() });
    },
  });
}

/** The engines a new cluster may run, with the Apache Kafka versions installed on this host. */
export function useEngines() {
  return useQuery({
    queryKey: [...clusterKeys.all, "engines"] as const,
    queryFn: async ({ signal }): Promise<Engine[]> =>
      unwrap(await apiClient.GET("/api/v1/clusters/engines/", { signal })),
    staleTime: 5 * 60_000,
  });
}

export function useRegisterCluster() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ClusterRegister): Promise<Cluster> =>
      unwrap(await apiClient.POST("/api/v1/clusters/register/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: clusterKeys.list() }),
  });
}

export function useDeleteCluster(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (confirmName: string): Promise<AcceptedOperation> =>
      unwrap(
        await apiClient.DELETE("/api/v1/clusters/{id}/", {
          params: { path: { id } },
          // The API reads the confirmation from the body; the generated schema omits DELETE bodies.
          ...({ body: { confirm_name: confirmName } } as object),
        }),
      ),
    onSuccess: (accepted) => {
      queryClient.setQueryData(operationKeys.detail(accepted.operation.id), accepted.operation);
      void queryClient.invalidateQueries({ queryKey: operationKeys.forCluster(id) });
      return queryClient.invalidateQueries({ queryKey: clusterKeys.all });
    },
  });
}

export function useCheckClusterHealth(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<Cluster> =>
      unwrap(await apiClient.POST("/api/v1/clusters/{id}/check-health/", { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: clusterKeys.all }),
  });
}

export const brokerKeys = {
  detail: (cluster: number, nodeId: number) => [...clusterKeys.all, "broker", cluster, nodeId] as const,
};

/** One broker's replicas, disks and role, asked of the cluster on each visit (and every 30 s while open). */
export function useBroker(cluster: number, nodeId: number) {
  return useQuery({
    queryKey: brokerKeys.detail(cluster, nodeId),
    queryFn: async ({ signal }): Promise<BrokerDetail> =>
      unwrap(
        await apiClient.GET("/api/v1/clusters/{id}/brokers/{node_id}/", {
          params: { path: { id: cluster, node_id: String(nodeId) } },
          signal,
        }),
      ),
    refetchInterval: 30_000,
  });
}

/** Org admins: sets a broker's dynamic configs; the cluster page's configs are read again. */
export function useUpdateBrokerConfigs(cluster: number, nodeId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (configs: Record<string, string | null>) =>
      unwrap(
        await apiClient.PATCH("/api/v1/clusters/{id}/brokers/{node_id}/configs/", {
          params: { path: { id: cluster, node_id: String(nodeId) } },
          body: { configs },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: clusterKeys.detail(cluster) }),
  });
}
