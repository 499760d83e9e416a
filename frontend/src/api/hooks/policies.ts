import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { PolicyUpdate, TeamPolicy } from "../types";

export const policyKeys = {
  all: ["policies"] as const,
  forTeam: (team: number) => [...policyKeys.all, "team", team] as const,
};

/** Every team has exactly one policy; it is looked up by team. */
export function useTeamPolicy(team: number) {
  return useQuery({
    queryKey: policyKeys.forTeam(team),
    queryFn: async ({ signal }): Promise<TeamPolicy | null> => {
      const page = unwrap(await apiClient.GET("/api/v1/policies/", { params: { query: { team } }, signal }));
      return page.results[0] ?? null;
    },
  });
}

export function useUpdatePolicy() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, changes }: { id: number; changes: PolicyUpdate }): Promise<TeamPolicy> =>
      unwrap(await apiClient.PATCH("/api/v1/policies/{id}/", { params: { path: { id } }, body: changes })),
    onSuccess: (policy) => queryClient.setQueryData(policyKeys.forTeam(policy.team), policy),
  });
}
