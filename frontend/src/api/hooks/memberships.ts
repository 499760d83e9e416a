import { useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import { accessKeys } from "./access";
import type { Membership, MembershipCreate, TeamRole } from "../types";

export interface MembershipFilters {
  team?: number;
  username?: string;
}

export const membershipKeys = {
  all: ["memberships"] as const,
  list: (filters: MembershipFilters = {}) => [...membershipKeys.all, "list", filters] as const,
};

export function membershipsQueryOptions(filters: MembershipFilters = {}) {
  return {
    queryKey: membershipKeys.list(filters),
    queryFn: ({ signal }: { signal: AbortSignal }): Promise<Membership[]> =>
      listAll(async (offset, limit) =>
        unwrap(
          await apiClient.GET("/api/v1/memberships/", {
            params: { query: { ...filters, offset, limit } },
            signal,
          }),
        ),
      ),
  };
}

/** Members of one team, or every membership the caller can see when no team is given. */
export function useMemberships(filters: MembershipFilters = {}, options: { enabled?: boolean } = {}) {
  return useQuery({ ...membershipsQueryOptions(filters), enabled: options.enabled ?? true });
}

/** A membership change can change the caller's own rights, so their access is refetched too. */
function refetchMemberships(queryClient: QueryClient) {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: membershipKeys.all }),
    queryClient.invalidateQueries({ queryKey: accessKeys.all }),
  ]);
}

export function useAddMember() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: MembershipCreate): Promise<Membership> =>
      unwrap(await apiClient.POST("/api/v1/memberships/", { body })),
    onSuccess: () => refetchMemberships(queryClient),
  });
}

export function useChangeMemberRole() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, role }: { id: number; role: TeamRole }): Promise<Membership> =>
      unwrap(await apiClient.PATCH("/api/v1/memberships/{id}/", { params: { path: { id } }, body: { role } })),
    onSuccess: () => refetchMemberships(queryClient),
  });
}

export function useRemoveMember() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<void> => {
      unwrap(await apiClient.DELETE("/api/v1/memberships/{id}/", { params: { path: { id } } }));
    },
    onSuccess: () => refetchMemberships(queryClient),
  });
}
