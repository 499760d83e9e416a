import { useQuery } from "@tanstack/react-query";

import { ApiError } from "../errors";
import { apiClient, unwrap } from "../client";
import type { paths } from "../schema";

type Json<Response> = Response extends { content: { "application/json": infer Body } } ? Body : never;
type FleetPath = paths["/api/v1/lag/groups/"]["get"];

export type GroupLagPage = Json<FleetPath["responses"][200]>;
export type GroupLag = GroupLagPage["results"][number];
export type GroupLagQuery = NonNullable<FleetPath["parameters"]["query"]>;
export type GroupLagDetail = Json<paths["/api/v1/lag/groups/{group}/"]["get"]["responses"][200]>;
export type PartitionHealth = GroupLagDetail["partitions"][number];
export type LagStatus = NonNullable<GroupLag["status"]>;
export type LagChart = Json<paths["/api/v1/lag/groups/{group}/chart/"]["get"]["responses"][200]>;

/** The chart's ranges; the API picks raw samples, minute or hour rollups to match. */
export const LAG_RANGES = { "1h": 3_600_000, "6h": 6 * 3_600_000, "24h": 24 * 3_600_000, "7d": 7 * 24 * 3_600_000 };
export type LagRange = keyof typeof LAG_RANGES;
/** Matches the sampler's default interval: a fresher chart would show the same points. */
const LAG_REFRESH_MS = 15_000;

export const lagKeys = {
  all: ["lag"] as const,
  fleet: (query: GroupLagQuery) => [...lagKeys.all, "fleet", query] as const,
  group: (group: number) => [...lagKeys.all, "group", group] as const,
  chart: (group: number, range: LagRange) => [...lagKeys.all, "chart", group, range] as const,
};

/** The fleet view: groups' health, worst first unless `ordering` says otherwise. */
export function useLagFleet(query: GroupLagQuery) {
  return useQuery({
    queryKey: lagKeys.fleet(query),
    queryFn: async ({ signal }): Promise<GroupLagPage> =>
      unwrap(await apiClient.GET("/api/v1/lag/groups/", { params: { query }, signal })),
    refetchInterval: LAG_REFRESH_MS,
  });
}

/** A group's health, or null while the sampler has not seen it yet (the API answers 404). */
export function useGroupLag(group: number) {
  return useQuery({
    queryKey: lagKeys.group(group),
    queryFn: async ({ signal }): Promise<GroupLagDetail | null> => {
      try {
        return unwrap(
          await apiClient.GET("/api/v1/lag/groups/{group}/", { params: { path: { group: String(group) } }, signal }),
        );
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
    refetchInterval: LAG_REFRESH_MS,
  });
}

export function useLagChart(group: number, range: LagRange, enabled = true) {
  return useQuery({
    queryKey: lagKeys.chart(group, range),
    enabled,
    queryFn: async ({ signal }): Promise<LagChart> => {
      const until = new Date();
      const since = new Date(until.getTime() - LAG_RANGES[range]);
      return unwrap(
        await apiClient.GET("/api/v1/lag/groups/{group}/chart/", {
          params: { path: { group: String(group) }, query: { since: since.toISOString(), until: until.toISOString() } },
          signal,
        }),
      );
    },
    refetchInterval: LAG_REFRESH_MS,
  });
}
