import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { ScramCredential, ScramCredentialCreate, ScramCredentialWithPassword } from "../types";

export const scramCredentialKeys = {
  all: ["scram-credentials"] as const,
  forServiceAccount: (serviceAccount: number) => [...scramCredentialKeys.all, "list", { serviceAccount }] as const,
};

export function useScramCredentials(serviceAccount: number) {
  return useQuery({
    queryKey: scramCredentialKeys.forServiceAccount(serviceAccount),
    queryFn: ({ signal }): Promise<ScramCredential[]> =>
      listAll(async (offset, limit) =>
        unwrap(
          await apiClient.GET("/api/v1/scram-credentials/", {
            params: { query: { service_account: serviceAccount, offset, limit } },
            signal,
          }),
        ),
      ),
  });
}

/** The response carries the password; callers show it once and keep it nowhere else. */
export function useCreateScramCredential() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: ScramCredentialCreate): Promise<ScramCredentialWithPassword> =>
      unwrap(await apiClient.POST("/api/v1/scram-credentials/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: scramCredentialKeys.all }),
  });
}

export function useRotateScramCredential() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<ScramCredentialWithPassword> =>
      unwrap(await apiClient.POST("/api/v1/scram-credentials/{id}/rotate/", { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: scramCredentialKeys.all }),
  });
}

export function useDeleteScramCredential() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/scram-credentials/{id}/", { params: { path: { id } } }));
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: scramCredentialKeys.all }),
  });
}
