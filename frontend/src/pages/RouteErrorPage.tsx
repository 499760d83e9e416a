import { isRouteErrorResponse, useRouteError } from "react-router";

import { ErrorState } from "../components/states";

/**
 * Shown when rendering a route throws, including when a page's code cannot
 * be fetched (for example after a deploy replaced the hashed files).
 */
export function RouteErrorPage() {
  const error = useRouteError();
  const shown = isRouteErrorResponse(error) ? new Error(`${error.status} ${error.statusText}`) : error;
  return (
    <main className="content">
      <ErrorState error={shown} title="This page failed to load" onRetry={() => window.location.reload()} />
    </main>
  );
}
