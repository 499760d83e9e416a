import { queryOptions, useQuery } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { Team } from "../types";

export const teamKeys = {
  all: ["teams"] as const,
  list: () => [...teamKeys.all, "list"] as const,
  detail: (id: number) => [...teamKeys.all, "detail", id] as const,
};

export function teamsQueryOptions() {
  return queryOptions({
    queryKey: teamKeys.list(),
    queryFn: ({ signal }): Promise<Team[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/teams/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

export function useTeams() {
  return useQuery(teamsQueryOptions());
}

export function useTeam(id: number) {
  return useQuery({
    queryKey: teamKeys.detail(id),
    queryFn: async ({ signal }): Promise<Team> =>
      unwrap(await apiClient.GET("/api/v1/teams/{id}/", { params: { path: { id } }, signal })),
  });
}
