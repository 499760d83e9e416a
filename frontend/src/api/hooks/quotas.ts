import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { ClientQuota, ClientQuotaCreate, ClientQuotaUpdate } from "../types";

export const quotaKeys = {
  all: ["quotas"] as const,
  list: () => [...quotaKeys.all, "list"] as const,
};

export function useQuotas() {
  return useQuery({
    queryKey: quotaKeys.list(),
    queryFn: ({ signal }): Promise<ClientQuota[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/quotas/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

export function useCreateQuota() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ClientQuotaCreate): Promise<ClientQuota> =>
      unwrap(await apiClient.POST("/api/v1/quotas/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: quotaKeys.all }),
  });
}

export function useUpdateQuota() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, values }: { id: number; values: ClientQuotaUpdate["values"] }): Promise<ClientQuota> =>
      unwrap(await apiClient.PATCH("/api/v1/quotas/{id}/", { params: { path: { id } }, body: { values } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: quotaKeys.all }),
  });
}

export function useDeleteQuota() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/quotas/{id}/", { params: { path: { id } } }));
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: quotaKeys.all }),
  });
}
