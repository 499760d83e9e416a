import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, signedIn, signedOut, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { page } from "../test/tenancyFixtures";

const overview = { version: "0.1.0", worker: { alive: true, last_heartbeat: null } };
/** The overview page's other panels, empty, so no request of the home page goes unanswered. */
const overviewPanels = {
  "GET /api/v1/clusters/": page([]),
  "GET /api/v1/lag/groups/": page([]),
  "GET /api/v1/alerts/": page([]),
};

describe("the auth guard", () => {
  it("redirects a signed-out visitor to the login page with next set", async () => {
    stubFetch({ "GET /api/v1/auth/session/": json(200, signedOut) });
    const { router } = renderApp("/topics?cluster=prod");

    expect(await screen.findByRole("button", { name: "Sign in" })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/login");
    expect(router.state.location.search).toBe(`?next=${encodeURIComponent("/topics?cluster=prod")}`);
    expect(screen.queryByRole("navigation", { name: "Main" })).not.toBeInTheDocument();
  });

  it("shows the layout with navigation and the username to a signed-in person", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/overview/": json(200, overview),
      ...overviewPanels,
    });
    const { router, user } = renderApp("/");

    const nav = await screen.findByRole("navigation", { name: "Main" });
    expect(
      within(nav)
        .getAllByRole("link")
        .map((link) => link.textContent),
    ).toEqual([
      "Overview",
      "Clusters",
      "Topics",
      "Consumer groups",
      "ACLs",
      "Quotas",
      "Schemas",
      "Service accounts",
      "Teams",
      "People",
      "Jobs",
      "Connectors",
      "Replication",
      "Alerts",
      "Audit log",
      "Settings",
    ]);
    expect(screen.getByText("ada")).toBeInTheDocument();

    // Settings needs nothing from the API beyond the session, so the click shows its page straight away.
    await user.click(within(nav).getByRole("link", { name: "Settings" }));
    expect(await screen.findByRole("heading", { level: 1, name: "Settings" })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/settings");
    expect(within(nav).getByRole("link", { name: "Settings" })).toHaveAttribute("aria-current", "page");
    expect(within(nav).getByRole("link", { name: "Overview" })).not.toHaveAttribute("aria-current");
  });

  it("sends the person to the login page when the API says the session ended", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      ...overviewPanels,
      "GET /api/v1/overview/": json(403, {
        error: { code: "not_authenticated", message: "Authentication credentials were not provided.", details: {} },
      }),
    });
    const { router } = renderApp("/");

    expect(await screen.findByRole("button", { name: "Sign in" })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/login");
    expect(router.state.location.search).toBe("?next=%2F");
  });

  it("signs out and returns to the login page", async () => {
    let session = signedIn;
    const fetchSpy = stubFetch({
      "GET /api/v1/auth/session/": () => json(200, session),
      "GET /api/v1/overview/": json(200, overview),
      ...overviewPanels,
      "POST /api/v1/auth/logout/": () => {
        session = signedOut;
        return json(200, { end_session_url: null });
      },
    });
    const { router, user } = renderApp("/");

    await user.click(await screen.findByRole("button", { name: "Sign out" }));

    expect(await screen.findByRole("button", { name: "Sign in" })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/login");
    const sent = requestsOf(fetchSpy).map((request) => `${request.method} ${new URL(request.url).pathname}`);
    expect(sent).toContain("POST /api/v1/auth/logout/");
  });

  it("shows a not-found page for unknown paths inside the console", async () => {
    stubFetch({ "GET /api/v1/auth/session/": json(200, signedIn) });
    renderApp("/no/such/page");

    expect(await screen.findByRole("heading", { level: 1, name: "Page not found" })).toBeInTheDocument();
  });

  it("switches to dark mode and remembers it", async () => {
    stubFetch({ "GET /api/v1/auth/session/": json(200, signedIn) });
    const { user } = renderApp("/settings");

    await user.click(await screen.findByRole("button", { name: "Dark mode" }));

    await waitFor(() => expect(document.documentElement.dataset.theme).toBe("dark"));
    expect(window.localStorage.getItem("console.theme")).toBe("dark");
    expect(screen.getByRole("button", { name: "Light mode" })).toBeInTheDocument();
  });
});
