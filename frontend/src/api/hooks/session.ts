import { queryOptions, useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";

import { apiClient, unwrap } from "../client";
import type { AuthOptions, LoginRequest, Profile, Session, User } from "../types";

export const sessionKeys = {
  all: ["session"] as const,
  current: () => [...sessionKeys.all, "current"] as const,
  options: () => [...sessionKeys.all, "options"] as const,
  profile: () => [...sessionKeys.all, "profile"] as const,
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
export function replaceSession(queryClient: QueryClient, session: Session): void {
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

/** How the login page offers to sign in: single sign-on, and whether the password form shows. */
export function useAuthOptions() {
  return useQuery({
    queryKey: sessionKeys.options(),
    queryFn: async ({ signal }): Promise<AuthOptions> =>
      unwrap(await apiClient.GET("/api/v1/auth/options/", { signal })),
    staleTime: 5 * 60_000,
  });
}

/** The signed-in person's identity source, provider groups, organizations and teams. */
export function useProfile() {
  return useQuery({
    queryKey: sessionKeys.profile(),
    queryFn: async ({ signal }): Promise<Profile> => unwrap(await apiClient.GET("/api/v1/auth/profile/", { signal })),
  });
}

/**
 * Ends the console session. After a single sign-on the server names the
 * provider's logout page (RP-initiated logout); the browser goes there so the
 * provider's session ends too, and the provider sends it back to /login.
 */
export function useLogout(leave: (url: string) => void = (url) => window.location.assign(url)) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<string | null> =>
      unwrap(await apiClient.POST("/api/v1/auth/logout/")).end_session_url,
    onSuccess: (endSessionUrl) => {
      replaceSession(queryClient, signedOutSession);
      if (endSessionUrl) leave(endSessionUrl);
    },
  });
}
