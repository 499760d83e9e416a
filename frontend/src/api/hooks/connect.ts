import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type {
  ConnectCluster,
  ConnectClusterCreate,
  Connector,
  ConnectorCreate,
  ConnectorDetail,
  ConnectorPlugin,
} from "../types";

export const connectKeys = {
  all: ["connect"] as const,
  clusters: () => [...connectKeys.all, "clusters"] as const,
  plugins: (connectCluster: number) => [...connectKeys.all, "plugins", connectCluster] as const,
  connectors: () => [...connectKeys.all, "connectors"] as const,
  connector: (id: number) => [...connectKeys.all, "connector", id] as const,
};

export function useConnectClusters() {
  return useQuery({
    queryKey: connectKeys.clusters(),
    queryFn: ({ signal }): Promise<ConnectCluster[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/connect-clusters/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

export function useConnectorPlugins(connectCluster: number | "") {
  return useQuery({
    queryKey: connectKeys.plugins(Number(connectCluster)),
    enabled: connectCluster !== "",
    queryFn: async ({ signal }): Promise<ConnectorPlugin[]> =>
      unwrap(
        await apiClient.GET("/api/v1/connect-clusters/{id}/plugins/", {
          params: { path: { id: Number(connectCluster) } },
          signal,
        }),
      ),
  });
}

export function useConnectors() {
  return useQuery({
    queryKey: connectKeys.connectors(),
    queryFn: ({ signal }): Promise<Connector[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/connectors/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

/** One connector with Connect's live status of it and its tasks, refreshed while the page shows it. */
export function useConnector(id: number | null) {
  return useQuery({
    queryKey: connectKeys.connector(id ?? 0),
    enabled: id !== null,
    refetchInterval: 3000,
    queryFn: async ({ signal }): Promise<ConnectorDetail> =>
      unwrap(await apiClient.GET("/api/v1/connectors/{id}/", { params: { path: { id: id ?? 0 } }, signal })),
  });
}

export function useCreateConnector() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ConnectorCreate): Promise<unknown> =>
      unwrap(await apiClient.POST("/api/v1/connectors/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: connectKeys.all }),
  });
}

export function useConnectorStateChange() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, pause }: { id: number; pause: boolean }): Promise<Connector> =>
      pause
        ? unwrap(await apiClient.POST("/api/v1/connectors/{id}/pause/", { params: { path: { id } } }))
        : unwrap(await apiClient.POST("/api/v1/connectors/{id}/resume/", { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: connectKeys.all }),
  });
}

export function useAttachConnectCluster() {
  const queryClient = useQueryClient();
  return useMutation({
    // The answer comes once the workers serve (20-60 s): the attach waits for them.
    mutationFn: async (body: ConnectClusterCreate): Promise<ConnectCluster> =>
      unwrap(await apiClient.POST("/api/v1/connect-clusters/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: connectKeys.all }),
  });
}
