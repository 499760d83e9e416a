import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, signedIn, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";

const healthy = {
  version: "0.4.1",
  worker: { alive: true, last_heartbeat: new Date(Date.now() - 30_000).toISOString() },
};

describe("OverviewPage", () => {
  it("shows the worker's health and the version from the overview endpoint", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/overview/": json(200, healthy),
    });
    renderApp("/");

    expect(await screen.findByRole("heading", { level: 1, name: "Overview" })).toBeInTheDocument();
    const worker = await screen.findByRole("region", { name: "Background worker" });
    expect(worker).toHaveTextContent("Running");
    expect(worker).toHaveTextContent("Last heartbeat");
    expect(worker).toHaveClass("stat-card--neutral");
    expect(screen.getByText("Version 0.4.1")).toBeInTheDocument();
  });

  it("warns when the worker has not reported", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/overview/": json(200, { version: "0.4.1", worker: { alive: false, last_heartbeat: null } }),
    });
    renderApp("/");

    const worker = await screen.findByRole("region", { name: "Background worker" });
    expect(worker).toHaveTextContent("Not reporting");
    expect(worker).toHaveTextContent("No heartbeat received yet");
    expect(worker).toHaveClass("stat-card--warning");
  });

  it("shows the error and loads again on retry", async () => {
    let calls = 0;
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/overview/": () => {
        calls += 1;
        return calls === 1 ? { status: 502, rawBody: "<html><body>Bad gateway</body></html>" } : json(200, healthy);
      },
    });
    const { user } = renderApp("/");

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not load the overview");
    expect(alert).toHaveTextContent("The server answered with HTTP 502.");

    await user.click(screen.getByRole("button", { name: "Try again" }));

    expect(await screen.findByRole("region", { name: "Background worker" })).toHaveTextContent("Running");
  });
});
