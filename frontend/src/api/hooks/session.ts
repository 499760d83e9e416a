import { queryOptions, useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { LoginRequest, Session, User } from "../types";

export const sessionKeys = {
  all: ["session"] as const,
  current: () => [...sessionKeys.all, "current"] as const,
};

export const signedOutSession: Session = { authenticated: false, user: null };

/** Shared by the hook and the route loaders that need the session first. */
export function sessionQueryOptions() {
  return queryOptions({
    queryKey: sessionKeys.current(),
    queryFn: async ({ signal }): Promise<Session> => unwrap(await apiClient.GET("/api/v1/auth/session/", { signal })),
    staleTime: 5 * 60_000,
  });
}

/**
 * Drops everything cached for the previous person and records the new
 * session. The session query itself is kept (not cleared) so components
 * watching it, like the auth guard, see the change.
 */
function replaceSession(queryClient: QueryClient, session: Session): void {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== sessionKeys.all[0] });
  queryClient.setQueryData<Session>(sessionKeys.current(), session);
}

export function useSession() {
  return useQuery(sessionQueryOptions());
}

export function useLogin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (credentials: LoginRequest): Promise<User> =>
      unwrap(await apiClient.POST("/api/v1/auth/login/", { body: credentials })).user,
    onSuccess: (user) => replaceSession(queryClient, { authenticated: true, user }),
  });
}

export function useLogout() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<void> => {
      unwrap(await apiClient.POST("/api/v1/auth/logout/"));
    },
    onSuccess: () => replaceSession(queryClient, signedOutSession),
  });
}
