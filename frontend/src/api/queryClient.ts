import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";

import { ApiError, isUnauthenticated } from "./errors";
import { signedOutSession, sessionKeys } from "./hooks/session";

const MAX_RETRIES = 2;

function shouldRetry(failureCount: number, error: unknown): boolean {
  // A 4xx will not change by asking again; 5xx and network failures might.
  if (error instanceof ApiError && error.status >= 400 && error.status < 500) return false;
  return failureCount < MAX_RETRIES;
}

/**
 * The app's QueryClient. When any request reports that the session is gone,
 * the cached session flips to signed-out and the auth guard sends the person
 * to the login page.
 */
export function createQueryClient(options: { retry?: boolean } = {}): QueryClient {
  const queryClient: QueryClient = new QueryClient({
    queryCache: new QueryCache({ onError: handleError }),
    mutationCache: new MutationCache({ onError: handleError }),
    defaultOptions: {
      queries: {
        retry: options.retry === false ? false : shouldRetry,
        staleTime: 30_000,
        refetchOnWindowFocus: true,
      },
      mutations: { retry: false },
    },
  });

  function handleError(error: unknown): void {
    if (isUnauthenticated(error)) {
      queryClient.setQueryData(sessionKeys.current(), signedOutSession);
    }
  }

  return queryClient;
}
