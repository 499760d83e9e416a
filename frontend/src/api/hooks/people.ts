import { useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import { listAll } from "../listAll";
import { accessKeys } from "./access";
import { replaceSession } from "./session";
import { membershipKeys } from "./memberships";
import type { CreatedPerson, IssuedLink, PasswordLinkInfo, Person, PersonCreate, Session } from "../types";

export const peopleKeys = {
  all: ["people"] as const,
  list: () => [...peopleKeys.all, "list"] as const,
};

/** People of the organizations the caller administers (empty for everybody else). */
export function usePeople(options: { enabled?: boolean } = {}) {
  return useQuery({
    queryKey: peopleKeys.list(),
    enabled: options.enabled ?? true,
    queryFn: ({ signal }): Promise<Person[]> =>
      listAll(async (offset, limit) =>
        unwrap(await apiClient.GET("/api/v1/people/", { params: { query: { offset, limit } }, signal })),
      ),
  });
}

/** People, their team roles and the caller's own rights can all change together. */
function refetchPeople(queryClient: QueryClient) {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: peopleKeys.all }),
    queryClient.invalidateQueries({ queryKey: membershipKeys.all }),
    queryClient.invalidateQueries({ queryKey: accessKeys.all }),
  ]);
}

export function useCreatePerson() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: PersonCreate): Promise<CreatedPerson> =>
      unwrap(await apiClient.POST("/api/v1/people/", { body })),
    onSuccess: () => refetchPeople(queryClient),
  });
}

export function useSetPersonActive() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, active }: { id: number; active: boolean }): Promise<Person> =>
      unwrap(
        active
          ? await apiClient.POST("/api/v1/people/{id}/reactivate/", { params: { path: { id } } })
          : await apiClient.POST("/api/v1/people/{id}/deactivate/", { params: { path: { id } } }),
      ),
    onSuccess: () => refetchPeople(queryClient),
  });
}

export function useIssuePasswordLink() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: number): Promise<IssuedLink> =>
      unwrap(await apiClient.POST("/api/v1/people/{id}/password-link/", { params: { path: { id } } })),
    onSuccess: () => refetchPeople(queryClient),
  });
}

/** Whose one-time link a token is; no retry: an invalid link stays invalid. */
export function usePasswordLink(token: string) {
  return useQuery({
    queryKey: ["password-link", token],
    enabled: token !== "",
    retry: false,
    staleTime: Infinity,
    queryFn: async (): Promise<PasswordLinkInfo> =>
      unwrap(await apiClient.POST("/api/v1/auth/password-links/inspect/", { body: { token } })),
  });
}

/**
 * Sets the password with a one-time link. The API signs the person in as well (unless single sign-on
 * hides password sign-in), so the session is read again: the page goes on into the console.
 */
export function useSetPasswordWithLink() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: { token: string; password: string }): Promise<Session> => {
      unwrap(await apiClient.POST("/api/v1/auth/password-links/use/", { body }));
      return unwrap(await apiClient.GET("/api/v1/auth/session/"));
    },
    onSuccess: (session) => replaceSession(queryClient, session),
  });
}

/** Makes a person an admin of one organization, or takes that away (`/org-memberships/`). */
export function useSetOrgAdmin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ membership, isOrgAdmin }: { membership: number; isOrgAdmin: boolean }): Promise<void> => {
      unwrap(
        await apiClient.PATCH("/api/v1/org-memberships/{id}/", {
          params: { path: { id: membership } },
          body: { is_org_admin: isOrgAdmin },
        }),
      );
    },
    onSuccess: () => refetchPeople(queryClient),
  });
}
