import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { cluster } from "../test/clusterFixtures";
import { json, signedIn, stubFetch } from "../test/fetchStub";
import { bodyCellTexts } from "../test/tables";
import { page, query } from "../test/tenancyFixtures";
import { groupLag } from "./groups/groupFixtures";
import { renderPage } from "../test/renderPage";
import { OverviewPage } from "./OverviewPage";

const healthy = {
  version: "0.4.1",
  worker: { alive: true, last_heartbeat: new Date(Date.now() - 30_000).toISOString() },
};

const firing = {
  id: 4,
  rule: 2,
  rule_name: "billing behind",
  team: 1,
  team_name: "Payments",
  cluster: 3,
  cluster_name: "orders",
  group_name: "payments.billing",
  topic: "",
  partition: null,
  state: "firing",
  severity: "critical",
  metric: "lag_seconds",
  value: 95,
  value_text: "95 s",
  status: "LAGGING",
  reason: "",
  pending_since: "2026-01-05T09:58:00Z",
  fired_at: "2026-01-05T09:59:00Z",
  resolved_at: null,
  last_evaluated_at: "2026-01-05T10:00:00Z",
  last_notified_at: null,
  notification_count: 1,
  acknowledged_at: null,
  acknowledged_by_name: "",
  silenced_by: null,
};

const brokerDown = {
  ...firing,
  id: 9,
  rule: 7,
  rule_name: "brokers",
  group_name: "broker 3",
  metric: "broker_down",
  value: 1,
  value_text: "down",
  status: "",
  reason: "Broker 3 is not listed by the cluster (stopped, fenced or unreachable).",
  fired_at: "2026-01-05T10:00:00Z",
};

/** Lag alerts and cluster-health alerts come from one endpoint, told apart by `kind`. */
function alertsByKind(lag: object[], health: object[]) {
  return async (request: Request) => page(query(request).get("kind") === "cluster_health" ? health : lag);
}

const throughput = {
  cluster: 3,
  times: ["2026-01-05T10:00:15Z", "2026-01-05T10:00:30Z"],
  messages_per_second: [1500, 70],
  by_topic: ["orders", "audit", "clicks", "views", "payments", "logs"].map((topic, index) => ({
    topic,
    messages_per_second: [6 - index, 6 - index],
  })),
};

const noSamples = { cluster: 3, times: [], messages_per_second: [], by_topic: [] };

type Handlers = Parameters<typeof stubFetch>[0];

function stubOverview(extra: Handlers = {}) {
  return stubFetch({
    "GET /api/v1/auth/session/": json(200, signedIn),
    "GET /api/v1/overview/": json(200, healthy),
    "GET /api/v1/clusters/": page([cluster()]),
    "GET /api/v1/lag/groups/": page([groupLag()], 12),
    "GET /api/v1/alerts/": alertsByKind([firing], []),
    "GET /api/v1/clusters/3/throughput/": json(200, throughput),
    ...extra,
  });
}

const renderOverview = () => renderPage(<OverviewPage />, "/", "/");

describe("OverviewPage", () => {
  it("shows the clusters with their health, brokers and partitions", async () => {
    stubOverview();
    renderOverview();
    expect(await screen.findByRole("heading", { level: 1, name: "Overview" })).toBeInTheDocument();
    const table = await screen.findByRole("table", { name: "Clusters" });
    expect(bodyCellTexts(table)).toEqual([["orders", "running", "healthy · 1 broker up", "1 of 1", "4", "12"]]);
  });

  it("lists the worst-lagging groups from the lag fleet and the firing alerts", async () => {
    const fetchSpy = stubOverview();
    renderOverview();
    const groups = await screen.findByRole("table", { name: "Worst-lagging groups" });
    expect(bodyCellTexts(groups)).toEqual([
      ["payments.billing", "stalled", "Committed offset has not moved for 5 min", "1,500", "2 min", "3/s"],
    ]);
    expect(within(groups).getByRole("link", { name: "payments.billing" })).toHaveAttribute("href", "/groups/31");
    expect(screen.getByText(/12 groups in all/)).toBeInTheDocument();

    const alerts = await screen.findByRole("table", { name: "Firing alerts" });
    expect(bodyCellTexts(alerts)[0]?.slice(0, 4)).toEqual([
      "critical",
      "billing behind",
      "orders · payments.billing",
      "95 s",
    ]);
    const alertRequest = fetchSpy.mock.calls
      .map(([input]) => input as Request)
      .find((request) => request.url.includes("/alerts/") && query(request).get("kind") === "lag")!;
    expect(query(alertRequest).get("state")).toBe("firing");
    expect(await screen.findByText("No cluster health alerts firing")).toBeInTheDocument();
  });

  it("shows firing cluster-health alerts in their own table", async () => {
    stubOverview({ "GET /api/v1/alerts/": alertsByKind([firing], [brokerDown]) });
    renderOverview();
    const health = await screen.findByRole("table", { name: "Cluster health alerts" });
    expect(bodyCellTexts(health)[0]?.slice(0, 5)).toEqual(["critical", "orders", "broker 3", "Broker down", "down"]);
    const lag = await screen.findByRole("table", { name: "Firing alerts" });
    expect(bodyCellTexts(lag)).toHaveLength(1);
    expect(bodyCellTexts(lag)[0]?.[1]).toBe("billing behind");
  });

  it("says so when nothing lags, nothing fires and there are no clusters", async () => {
    stubOverview({
      "GET /api/v1/clusters/": page([]),
      "GET /api/v1/lag/groups/": page([]),
      "GET /api/v1/alerts/": page([]),
    });
    renderOverview();
    expect(await screen.findByText("No clusters yet")).toBeInTheDocument();
    expect(await screen.findByText("No consumer groups sampled yet")).toBeInTheDocument();
    expect(await screen.findByText("No alerts firing")).toBeInTheDocument();
  });

  it("shows the worker's health and the version from the overview endpoint", async () => {
    stubOverview();
    renderOverview();
    const worker = await screen.findByRole("region", { name: "Background worker" });
    expect(worker).toHaveTextContent("Running");
    expect(worker).toHaveTextContent("Last heartbeat");
    expect(worker).toHaveClass("stat-card--neutral");
    expect(screen.getByText("Version 0.4.1")).toBeInTheDocument();
  });

  it("warns when the worker has not reported", async () => {
    stubOverview({
      "GET /api/v1/overview/": json(200, { version: "0.4.1", worker: { alive: false, last_heartbeat: null } }),
    });
    renderOverview();
    const worker = await screen.findByRole("region", { name: "Background worker" });
    expect(worker).toHaveTextContent("Not reporting");
    expect(worker).toHaveTextContent("No heartbeat received yet");
    expect(worker).toHaveClass("stat-card--warning");
  });

  it("shows each section's error on its own and loads again on retry", async () => {
    let calls = 0;
    stubOverview({
      "GET /api/v1/overview/": () => {
        calls += 1;
        return calls === 1 ? { status: 502, rawBody: "<html><body>Bad gateway</body></html>" } : json(200, healthy);
      },
      "GET /api/v1/alerts/": json(403, { error: { code: "forbidden", message: "Not allowed.", details: {} } }),
    });
    const { user } = renderOverview();

    expect(await screen.findByText("Could not load the alerts")).toBeInTheDocument();
    const alert = (await screen.findByText("Could not load the overview")).closest("[role=alert]") as HTMLElement;
    expect(alert).toHaveTextContent("The server answered with HTTP 502.");
    // The other sections still load.
    expect(await screen.findByRole("table", { name: "Clusters" })).toBeInTheDocument();

    await user.click(within(alert).getByRole("button", { name: "Try again" }));
    expect(await screen.findByRole("region", { name: "Background worker" })).toHaveTextContent("Running");
  });

  it("charts the selected cluster's total throughput and its five busiest topics", async () => {
    stubOverview();
    const { user } = renderOverview();
    const section = (await screen.findByRole("heading", { name: "Throughput (messages/s), last hour" })).closest(
      "section",
    ) as HTMLElement;
    await user.click(await within(section).findByText("Show the data as a table"));
    const table = within(section).getByRole("table", { name: "Throughput of orders in messages per second data" });
    const [header, first] = within(table).getAllByRole("row");
    expect(
      within(header!)
        .getAllByRole("columnheader")
        .map((cell) => cell.textContent),
    ).toEqual(["Time", "total", "orders", "audit", "clicks", "views", "payments"]);
    expect(
      within(first!)
        .getAllByRole("cell")
        .slice(1, 3)
        .map((cell) => cell.textContent),
    ).toEqual(["1.5K/s", "6/s"]);
  });

  it("lets the user switch the throughput chart to another cluster", async () => {
    const fetchSpy = stubOverview({
      "GET /api/v1/clusters/": page([cluster(), cluster({ id: 8, name: "clicks" })]),
      "GET /api/v1/clusters/8/throughput/": json(200, noSamples),
    });
    const { user } = renderOverview();
    const picker = await screen.findByRole("combobox", { name: "Cluster" });
    await user.selectOptions(picker, "clicks");
    expect(await screen.findByText("No samples yet — the lag sampler runs every 15 s")).toBeInTheDocument();
    const urls = fetchSpy.mock.calls.map(([input]) => new URL((input as Request).url).pathname);
    expect(urls).toContain("/api/v1/clusters/8/throughput/");
  });

  it("says when the sampler has no throughput samples yet", async () => {
    stubOverview({ "GET /api/v1/clusters/3/throughput/": json(200, noSamples) });
    renderOverview();
    expect(await screen.findByText("No samples yet — the lag sampler runs every 15 s")).toBeInTheDocument();
  });

  it("shows the throughput's error and loads it again on retry", async () => {
    let calls = 0;
    stubOverview({
      "GET /api/v1/clusters/3/throughput/": () => {
        calls += 1;
        return calls === 1
          ? json(503, { error: { code: "unavailable", message: "Redis is down.", details: {} } })
          : json(200, throughput);
      },
    });
    const { user } = renderOverview();
    const alert = (await screen.findByText("Could not load the throughput")).closest("[role=alert]") as HTMLElement;
    await user.click(within(alert).getByRole("button", { name: "Try again" }));
    expect(await screen.findByText("Show the data as a table")).toBeInTheDocument();
  });
});
