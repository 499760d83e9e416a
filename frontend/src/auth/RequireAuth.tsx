import type { ReactNode } from "react";
import { Navigate, useLocation } from "react-router";

import { useSession } from "../api/hooks/session";
import { ErrorState, LoadingState } from "../components/states";
import { loginPathFor } from "./nextPath";

/**
 * Renders its children only for a signed-in person; anyone else goes to the
 * login page, which brings them back here afterwards. It re-checks whenever
 * the cached session changes, so an expired session redirects mid-visit too.
 */
export function RequireAuth({ children }: { children: ReactNode }) {
  const session = useSession();
  const location = useLocation();

  if (session.isPending) return <LoadingState label="Checking your session…" />;
  if (session.isError) {
    return (
      <ErrorState error={session.error} title="Could not check your session" onRetry={() => void session.refetch()} />
    );
  }
  if (!session.data.authenticated) return <Navigate to={loginPathFor(location)} replace />;
  return <>{children}</>;
}
