import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { ServiceAccount, ServiceAccountCreate } from "../types";

export const serviceAccountKeys = {
  all: ["service-accounts"] as const,
  list: (team?: number) => [...serviceAccountKeys.all, "list", { team }] as const,
  detail: (id: number) => [...serviceAccountKeys.all, "detail", id] as const,
};

export function useServiceAccounts(team?: number) {
  return useQuery({
    queryKey: serviceAccountKeys.list(team),
    queryFn: ({ signal }): Promise<ServiceAccount[]> =>
      listAll(async (offset, limit) =>
        unwrap(
          await apiClient.GET("/api/v1/service-accounts/", {
            params: { query: { team, offset, limit } },
            signal,
          }),
        ),
      ),
  });
}

export function useServiceAccount(id: number) {
  return useQuery({
    queryKey: serviceAccountKeys.detail(id),
    queryFn: async ({ signal }): Promise<ServiceAccount> =>
      unwrap(await apiClient.GET("/api/v1/service-accounts/{id}/", { params: { path: { id } }, signal })),
  });
}

export function useCreateServiceAccount() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ServiceAccountCreate): Promise<ServiceAccount> =>
      unwrap(await apiClient.POST("/api/v1/service-accounts/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: serviceAccountKeys.all }),
  });
}

export function useDeleteServiceAccount() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/service-accounts/{id}/", { params: { path: { id } } }));
    },
    onSuccess: (_, id) => {
      queryClient.removeQueries({ queryKey: serviceAccountKeys.detail(id) });
      return queryClient.invalidateQueries({ queryKey: serviceAccountKeys.list() });
    },
  });
}
