import { QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ReactElement } from "react";
import { createMemoryRouter, RouterProvider } from "react-router";

import { createQueryClient } from "../api/queryClient";

/**
 * Renders one page at `path` under its own route pattern, without the app's route table, so a
 * page's tests do not depend on every other page's module loading. Other paths render nothing, so a
 * test can follow a navigation away (its pathname) without the router's 404 page.
 */
export function renderPage(element: ReactElement, routePath: string, path: string) {
  const queryClient = createQueryClient({ retry: false });
  const router = createMemoryRouter(
    [
      { path: routePath, element },
      { path: "*", element: null },
    ],
    { initialEntries: [path] },
  );
  const user = userEvent.setup();
  render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return { router, queryClient, user };
}
