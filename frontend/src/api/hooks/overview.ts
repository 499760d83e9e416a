import { queryOptions, useQuery } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { paths } from "../schema";
import type { Overview } from "../types";

type Json<Response> = Response extends { content: { "application/json": infer Body } } ? Body : never;
export type AlertPage = Json<paths["/api/v1/alerts/"]["get"]["responses"][200]>;
export type FiringAlert = AlertPage["results"][number];
export type ClusterThroughput = Json<paths["/api/v1/clusters/{id}/throughput/"]["get"]["responses"][200]>;

/** How many of the worst groups and newest alerts the overview shows. */
export const OVERVIEW_TOP = 5;

export const overviewKeys = {
  all: ["overview"] as const,
  summary: () => [...overviewKeys.all, "summary"] as const,
  firingAlerts: (kind: AlertKind) => [...overviewKeys.all, "firing-alerts", kind] as const,
  throughput: (cluster: number) => [...overviewKeys.all, "throughput", cluster] as const,
};

export function overviewQueryOptions() {
  return queryOptions({
    queryKey: overviewKeys.summary(),
    queryFn: async ({ signal }): Promise<Overview> => unwrap(await apiClient.GET("/api/v1/overview/", { signal })),
  });
}

export function useOverview() {
  return useQuery(overviewQueryOptions());
}

/** Lag rules' alerts, or cluster-health rules' (brokers, partitions, disks, reachability). */
export type AlertKind = "lag" | "cluster_health";

/** Alerts of one kind firing now, newest first; the count says how many there are in all. */
export function useFiringAlerts(kind: AlertKind) {
  return useQuery({
    queryKey: overviewKeys.firingAlerts(kind),
    queryFn: async ({ signal }): Promise<AlertPage> =>
      unwrap(
        await apiClient.GET("/api/v1/alerts/", {
          params: { query: { state: ["firing"], kind, limit: OVERVIEW_TOP, ordering: "-fired_at" } },
          signal,
        }),
      ),
    refetchInterval: 30_000,
  });
}

/** The lag sampler writes the log-end points the throughput comes from every 15 s by default. */
const THROUGHPUT_REFRESH_MS = 15_000;

/** Messages per second over the last hour, in total and per topic (busiest first). */
export function useClusterThroughput(cluster: number) {
  return useQuery({
    queryKey: overviewKeys.throughput(cluster),
    queryFn: async ({ signal }): Promise<ClusterThroughput> =>
      unwrap(await apiClient.GET("/api/v1/clusters/{id}/throughput/", { params: { path: { id: cluster } }, signal })),
    refetchInterval: THROUGHPUT_REFRESH_MS,
  });
}
