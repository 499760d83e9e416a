import { queryOptions, useQuery } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { Overview } from "../types";

export const overviewKeys = {
  all: ["overview"] as const,
  summary: () => [...overviewKeys.all, "summary"] as const,
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
