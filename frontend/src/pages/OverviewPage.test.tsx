import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, signedIn, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";

describe("OverviewPage", () => {
  it("shows the numbers from the overview endpoint as cards", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/overview/": json(200, {
        clusters: 3,
        topics: 1250,
        service_accounts: 7,
        firing_alerts: 2,
        version: "0.4.1",
      }),
    });
    renderApp("/");

    expect(await screen.findByRole("heading", { level: 1, name: "Overview" })).toBeInTheDocument();
    expect(await screen.findByRole("link", { name: "Clusters: 3" })).toHaveAttribute("href", "/clusters");
    expect(screen.getByRole("link", { name: `Topics: ${(1250).toLocaleString()}` })).toHaveAttribute("href", "/topics");
    expect(screen.getByRole("link", { name: "Service accounts: 7" })).toHaveAttribute("href", "/service-accounts");
    const alerts = screen.getByRole("link", { name: "Firing alerts: 2" });
    expect(alerts).toHaveClass("stat-card--warning");
    expect(screen.getByText("Version 0.4.1")).toBeInTheDocument();
  });

  it("shows the error and loads again on retry", async () => {
    let calls = 0;
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/overview/": () => {
        calls += 1;
        return calls === 1
          ? { status: 502, rawBody: "<html><body>Bad gateway</body></html>" }
          : json(200, { clusters: 1, topics: 0, service_accounts: 0, firing_alerts: 0, version: "0.4.1" });
      },
    });
    const { user } = renderApp("/");

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not load the overview");
    expect(alert).toHaveTextContent("The server answered with HTTP 502.");

    await user.click(screen.getByRole("button", { name: "Try again" }));

    expect(await screen.findByRole("link", { name: "Clusters: 1" })).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Firing alerts: 0" })).not.toHaveClass("stat-card--warning");
  });
});
