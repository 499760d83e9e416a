import { queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { Team, TeamCreate, TeamUpdate } from "../types";

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

export function useCreateTeam() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: TeamCreate): Promise<Team> => unwrap(await apiClient.POST("/api/v1/teams/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: teamKeys.all }),
  });
}

export function useUpdateTeam(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: TeamUpdate): Promise<Team> =>
      unwrap(await apiClient.PATCH("/api/v1/teams/{id}/", { params: { path: { id } }, body })),
    onSuccess: (team) => {
      queryClient.setQueryData(teamKeys.detail(id), team);
      return queryClient.invalidateQueries({ queryKey: teamKeys.list() });
    },
  });
}

export function useDeleteTeam() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/teams/{id}/", { params: { path: { id } } }));
    },
    onSuccess: (_, id) => {
      queryClient.removeQueries({ queryKey: teamKeys.detail(id) });
      return queryClient.invalidateQueries({ queryKey: teamKeys.list() });
    },
  });
}
