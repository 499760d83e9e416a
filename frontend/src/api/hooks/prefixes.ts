import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { PrefixCreate, TeamPrefix } from "../types";

export const prefixKeys = {
  all: ["prefixes"] as const,
  list: (team?: number) => [...prefixKeys.all, "list", { team }] as const,
};

/** One team's prefixes, or every prefix the caller can see when no team is given. */
export function usePrefixes(team?: number) {
  return useQuery({
    queryKey: prefixKeys.list(team),
    queryFn: ({ signal }): Promise<TeamPrefix[]> =>
      listAll(async (offset, limit) =>
        unwrap(
          await apiClient.GET("/api/v1/prefixes/", {
            params: { query: { team, offset, limit } },
            signal,
          }),
        ),
      ),
  });
}

export function useAddPrefix() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: PrefixCreate): Promise<TeamPrefix> =>
      unwrap(await apiClient.POST("/api/v1/prefixes/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: prefixKeys.all }),
  });
}

export function useRemovePrefix() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/prefixes/{id}/", { params: { path: { id } } }));
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: prefixKeys.all }),
  });
}
