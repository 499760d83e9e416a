import { QueryClientProvider, type QueryClient } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ReactElement } from "react";
import { createMemoryRouter, RouterProvider } from "react-router";

import { createQueryClient } from "../api/queryClient";
import { buildRoutes } from "../routes";

/** Renders the whole app, real routes and guards included, at `path`. */
export function renderApp(path: string) {
  const queryClient = createQueryClient({ retry: false });
  const router = createMemoryRouter(buildRoutes(queryClient), { initialEntries: [path] });
  const user = userEvent.setup();
  render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return { router, queryClient, user };
}

/** Renders one component with a fresh QueryClient around it. */
export function renderWithQueryClient(
  element: ReactElement,
  queryClient: QueryClient = createQueryClient({ retry: false }),
) {
  const user = userEvent.setup();
  render(<QueryClientProvider client={queryClient}>{element}</QueryClientProvider>);
  return { queryClient, user };
}
