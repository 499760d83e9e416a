import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import type { AccessGrant, AccessGrantCreate, AclBinding, AclBindingCreate } from "../types";

export const aclKeys = {
  all: ["acls"] as const,
  list: () => [...aclKeys.all, "list"] as const,
  grants: (serviceAccount?: number) => [...aclKeys.all, "grants", { serviceAccount }] as const,
};

/** Every binding the caller can see; the ACL page filters them in the browser on any field. */
export function useAclBindings() {
  return useQuery({
    queryKey: aclKeys.list(),
    queryFn: ({ signal }): Promise<AclBinding[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/acls/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

export function useAccessGrants(serviceAccount?: number) {
  return useQuery({
    queryKey: aclKeys.grants(serviceAccount),
    queryFn: ({ signal }): Promise<AccessGrant[]> =>
      listAll(async (offset, limit) =>
        unwrap(
          await apiClient.GET("/api/v1/access-grants/", {
            params: { query: { service_account: serviceAccount, offset, limit } },
            signal,
          }),
        ),
      ),
  });
}

export function useCreateAclBinding() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: AclBindingCreate): Promise<AclBinding> =>
      unwrap(await apiClient.POST("/api/v1/acls/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: aclKeys.all }),
  });
}

/** A template (producer, consumer, stream app) applied to a service account: one grant, several bindings. */
export function useApplyTemplate() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: AccessGrantCreate): Promise<AccessGrant> =>
      unwrap(await apiClient.POST("/api/v1/access-grants/", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: aclKeys.all }),
  });
}

export function useDeleteAclBinding() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/acls/{id}/", { params: { path: { id } } }));
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: aclKeys.all }),
  });
}

/** Removes a grant and every binding it created. */
export function useRevokeGrant() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/access-grants/{id}/", { params: { path: { id } } }));
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: aclKeys.all }),
  });
}
