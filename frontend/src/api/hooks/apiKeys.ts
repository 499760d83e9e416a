import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { ApiKey, ApiKeyCreate, ApiKeyWithSecret } from "../types";

export const apiKeyKeys = {
  all: ["api-keys"] as const,
  forServiceAccount: (serviceAccount: number) => [...apiKeyKeys.all, "list", { serviceAccount }] as const,
};

export function useServiceAccountKeys(serviceAccount: number) {
  return useQuery({
    queryKey: apiKeyKeys.forServiceAccount(serviceAccount),
    queryFn: ({ signal }): Promise<ApiKey[]> =>
      listAll(async (offset, limit) =>
        unwrap(
          await apiClient.GET("/api/v1/api-keys/", {
            params: { query: { service_account: serviceAccount, offset, limit } },
            signal,
          }),
        ),
      ),
  });
}

/** The response carries the secret; callers show it once and keep it nowhere else. */
export function useCreateApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ApiKeyCreate): Promise<ApiKeyWithSecret> =>
      unwrap(await apiClient.POST("/api/v1/api-keys/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.all }),
  });
}

export function useRevokeApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (keyId: string): Promise<ApiKey> =>
      unwrap(await apiClient.POST("/api/v1/api-keys/{key_id}/revoke/", { params: { path: { key_id: keyId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.all }),
  });
}

export function useRotateApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({
      keyId,
      overlapSeconds,
    }: {
      keyId: string;
      overlapSeconds: number;
    }): Promise<ApiKeyWithSecret> =>
      unwrap(
        await apiClient.POST("/api/v1/api-keys/{key_id}/rotate/", {
          params: { path: { key_id: keyId } },
          body: { overlap_seconds: overlapSeconds },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.all }),
  });
}
