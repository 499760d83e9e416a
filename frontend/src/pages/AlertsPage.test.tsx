import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { membership, page, payments, search, signedInHandlers } from "../test/tenancyFixtures";
import type { Alert, AlertRule, Channel, Notification, Silence } from "./alerts/api";

const firing: Alert = {
  id: 5,
  rule: 3,
  rule_name: "payments fall behind",
  team: 1,
  team_name: "Payments",
  cluster: 4,
  cluster_name: "prod",
  group_name: "payments-ledger",
  topic: "",
  partition: null,
  state: "firing",
  severity: "critical",
  metric: "lag_seconds",
  value: 75,
  value_text: "75 s",
  status: "LAGGING",
  reason: "Lag grew across the window.",
  pending_since: "2026-01-05T10:00:00Z",
  fired_at: "2026-01-05T10:01:00Z",
  resolved_at: null,
  last_evaluated_at: "2026-01-05T10:05:00Z",
  last_notified_at: "2026-01-05T10:01:00Z",
  notification_count: 1,
  acknowledged_at: null,
  acknowledged_by_name: "",
  silenced_by: null,
};

const rule: AlertRule = {
  id: 3,
  team: 1,
  team_name: "Payments",
  name: "payments fall behind",
  description: "",
  cluster: null,
  cluster_name: null,
  group_pattern: "payments-*",
  topic_pattern: "*",
  all_teams: false,
  granularity: "group",
  metric: "lag_seconds",
  comparison: "gt",
  threshold: 30,
  resolve_threshold: null,
  statuses: [],
  for_seconds: 60,
  severity: "critical",
  channels: [8],
  renotify_interval_seconds: null,
  send_resolved: true,
  enabled: true,
  created_at: "2026-01-05T09:00:00Z",
  updated_at: "2026-01-05T09:00:00Z",
};

const hook: Channel = {
  id: 8,
  team: 1,
  team_name: "Payments",
  name: "on-call",
  kind: "webhook",
  url: "https://example.com/hook",
  email_recipients: [],
  signed: true,
  enabled: true,
  created_at: "2026-01-05T09:00:00Z",
  updated_at: "2026-01-05T09:00:00Z",
};

const silence: Silence = {
  id: 11,
  team: 1,
  team_name: "Payments",
  cluster: null,
  cluster_name: null,
  group_pattern: "payments-*",
  topic_pattern: "*",
  rule: 3,
  rule_name: "payments fall behind",
  severity: "",
  starts_at: "2026-01-05T10:00:00Z",
  ends_at: "2099-01-05T12:00:00Z",
  state: "active",
  comment: "ledger migration",
  created_by_name: "me",
  created_at: "2026-01-05T10:00:00Z",
};

function stubAlerts(role: "developer" | "viewer", extra = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", role)] }),
    "GET /api/v1/teams/": page([payments, search]),
    "GET /api/v1/clusters/": page([]),
    "GET /api/v1/alerts/": page([firing]),
    "GET /api/v1/alert-rules/": page([rule]),
    "GET /api/v1/alert-channels/": page([hook]),
    "GET /api/v1/alert-silences/": page([silence]),
    "POST /api/v1/alert-rules/preview/": json(200, { count: 0, groups: [] }),
    ...extra,
  });
}

const invalid = (details: Record<string, string[]>) =>
  json(400, { error: { code: "invalid", message: "The request is not valid.", details } });

/** The first render loads the lazy page; on a busy machine that takes a while. */
const FIRST_RENDER = { timeout: 8000 };

describe("AlertsPage", { timeout: 30_000 }, () => {
  it("lists active alerts and acknowledges one", async () => {
    let acknowledged = false;
    const fetchSpy = stubAlerts("developer", {
      "GET /api/v1/alerts/": () =>
        page([
          acknowledged ? { ...firing, acknowledged_by_name: "me", acknowledged_at: "2026-01-05T10:06:00Z" } : firing,
        ]),
      "POST /api/v1/alerts/5/acknowledge/": () => {
        acknowledged = true;
        return json(200, firing);
      },
    });
    const { user } = renderApp("/alerts");

    const table = await screen.findByRole("table", { name: "Active alerts" }, FIRST_RENDER);
    const row = within(table).getByRole("row", { name: /payments-ledger/ });
    expect(row).toHaveTextContent("75 s");
    expect(row).toHaveTextContent("Lag grew across the window.");
    await user.click(within(row).getByRole("button", { name: "Acknowledge" }));

    await waitFor(() => expect(within(table).queryByRole("button", { name: "Acknowledge" })).not.toBeInTheDocument());
    expect(within(table).getByRole("row", { name: /payments-ledger/ })).toHaveTextContent("me");
    const active = requestsOf(fetchSpy).find((request) => request.url.includes("/api/v1/alerts/?"));
    expect(new URL(active!.url).searchParams.get("active")).toBe("true");
  });

  it("shows the empty and error states", async () => {
    stubAlerts("developer", { "GET /api/v1/alerts/": page([]) });
    renderApp("/alerts");
    expect(await screen.findByText("Nothing is firing", {}, FIRST_RENDER)).toBeInTheDocument();
  });

  it("says when the history cannot be loaded", async () => {
    stubAlerts("developer", {
      "GET /api/v1/alerts/": json(503, { error: { code: "unavailable", message: "Try later.", details: {} } }),
    });
    renderApp("/alerts/history");
    expect(await screen.findByRole("alert", {}, FIRST_RENDER)).toHaveTextContent("Could not load the alert history");
    expect(screen.getByRole("link", { name: "History" })).toHaveClass("active");
  });

  it("filters the history on the server", async () => {
    const fetchSpy = stubAlerts("developer", {
      "GET /api/v1/alerts/": page([{ ...firing, state: "resolved", resolved_at: "2026-01-05T10:09:00Z" }]),
    });
    const { user } = renderApp("/alerts/history");
    expect(await screen.findByRole("table", { name: "Alert history" }, FIRST_RENDER)).toHaveTextContent("resolved");
    await user.selectOptions(screen.getByLabelText("State"), "resolved");
    await waitFor(() => {
      const last = requestsOf(fetchSpy)
        .filter((request) => request.url.includes("/api/v1/alerts/"))
        .at(-1)!;
      expect(new URL(last.url).searchParams.get("state")).toBe("resolved");
    });
  });

  it("validates a new rule before sending it and shows the server's field errors", async () => {
    const bodies: unknown[] = [];
    stubAlerts("developer", {
      "POST /api/v1/alert-rules/": async (request: Request) => {
        bodies.push(await request.json());
        return bodies.length === 1
          ? invalid({ name: ["The team already has a rule named 'slow'."] })
          : json(201, { ...rule, id: 4, name: "slow ledger" });
      },
    });
    const { user } = renderApp("/alerts/rules");

    expect(await screen.findByRole("table", { name: "Alert rules" }, FIRST_RENDER)).toHaveTextContent(
      "Lag (seconds) > 30 for 1m",
    );
    await user.click(screen.getByRole("button", { name: "New rule" }));
    const dialog = screen.getByRole("dialog", { name: "New alert rule" });
    expect(within(dialog).getByLabelText("Team")).toHaveTextContent("Payments");
    expect(within(dialog).queryByRole("option", { name: "Search" })).not.toBeInTheDocument();

    await user.clear(within(dialog).getByLabelText("Threshold"));
    await user.type(within(dialog).getByLabelText("Resolve threshold"), "10");
    await user.click(within(dialog).getByRole("button", { name: "Create rule" }));
    expect(within(dialog).getByLabelText("Name")).toHaveAccessibleDescription("Give the rule a name.");
    expect(within(dialog).getByLabelText("Threshold")).toHaveAccessibleDescription(/threshold of 0 or more/);
    expect(bodies).toHaveLength(0);

    await user.type(within(dialog).getByLabelText("Name"), "slow");
    await user.type(within(dialog).getByLabelText("Threshold"), "5");
    await user.click(within(dialog).getByRole("button", { name: "Create rule" }));
    expect(within(dialog).getByLabelText("Resolve threshold")).toHaveAccessibleDescription(
      /The resolve threshold must not be above the threshold\./,
    );
    expect(bodies).toHaveLength(0);

    await user.clear(within(dialog).getByLabelText("Threshold"));
    await user.type(within(dialog).getByLabelText("Threshold"), "30");
    await user.click(within(dialog).getByLabelText(/on-call/));
    await user.click(within(dialog).getByRole("button", { name: "Create rule" }));
    await waitFor(() =>
      expect(within(dialog).getByLabelText("Name")).toHaveAccessibleDescription(
        "The team already has a rule named 'slow'.",
      ),
    );
    expect(bodies[0]).toMatchObject({
      team: 1,
      name: "slow",
      metric: "lag_seconds",
      comparison: "gt",
      threshold: 30,
      resolve_threshold: 10,
      for_seconds: 60,
      channels: [8],
      renotify_interval_seconds: null,
    });

    await user.clear(within(dialog).getByLabelText("Name"));
    await user.type(within(dialog).getByLabelText("Name"), "slow ledger");
    await user.click(within(dialog).getByRole("button", { name: "Create rule" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
  });

  it("edits a rule into a status rule without sending a threshold", async () => {
    const patches: unknown[] = [];
    stubAlerts("developer", {
      "PATCH /api/v1/alert-rules/3/": async (request: Request) => {
        patches.push(await request.json());
        return json(200, { ...rule, metric: "status", threshold: null, statuses: ["STALLED"] });
      },
    });
    const { user } = renderApp("/alerts/rules");

    const table = await screen.findByRole("table", { name: "Alert rules" }, FIRST_RENDER);
    await user.click(within(table).getByRole("button", { name: "Edit" }));
    const dialog = screen.getByRole("dialog", { name: "Edit alert rule" });
    expect(within(dialog).queryByLabelText("Team")).not.toBeInTheDocument();
    expect(within(dialog).getByLabelText("Name")).toHaveValue("payments fall behind");
    await user.selectOptions(within(dialog).getByLabelText("Metric"), "status");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    expect(within(dialog).getByText("Name at least one status that fires.")).toBeInTheDocument();
    await user.click(within(dialog).getByLabelText("STALLED"));
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(patches).toHaveLength(1));
    expect(patches[0]).toMatchObject({ metric: "status", statuses: ["STALLED"], threshold: null, channels: [8] });
    expect(patches[0]).not.toHaveProperty("team");
  });

  it("previews the groups the rule matches now as it is typed", async () => {
    const asked: { group_pattern?: string }[] = [];
    const match = (group: string, breaches: boolean) => ({
      group_id: 1, group, cluster: 4, cluster_name: "prod", team_name: "Payments", status: "OK",
      lag_messages: 10, lag_seconds: 40, breaches_now: breaches,
    }); // prettier-ignore
    stubAlerts("developer", {
      "POST /api/v1/alert-rules/preview/": async (request: Request) => {
        const body = (await request.json()) as { group_pattern?: string };
        asked.push(body);
        const groups =
          body.group_pattern === "payments-ledger"
            ? [match("payments-ledger", true)]
            : [match("payments-ledger", true), match("payments-audit", false)];
        return json(200, { count: groups.length, groups });
      },
    });
    const { user } = renderApp("/alerts/rules");

    await screen.findByRole("table", { name: "Alert rules" }, FIRST_RENDER);
    await user.click(screen.getByRole("button", { name: "New rule" }));
    const dialog = screen.getByRole("dialog", { name: "New alert rule" });
    const status = within(dialog).getByRole("status", { name: "Matching groups" });
    await waitFor(() =>
      expect(status).toHaveTextContent("Matches 2 groups now (1 breaching): payments-ledger, payments-audit."),
    );
    await user.clear(within(dialog).getByLabelText("Consumer groups"));
    await user.type(within(dialog).getByLabelText("Consumer groups"), "payments-ledger");
    await waitFor(() => expect(status).toHaveTextContent("Matches 1 group now (1 breaching): payments-ledger."));
    expect(asked.at(-1)).toMatchObject({ team: 1, metric: "lag_seconds", threshold: 30, all_teams: false });
    expect(within(dialog).queryByLabelText(/Every team/)).not.toBeInTheDocument(); // developers: own team only
  });

  it("creates a cluster-health rule with its default threshold and no group or topic fields", async () => {
    const bodies: unknown[] = [];
    stubAlerts("developer", {
      "POST /api/v1/alert-rules/": async (request: Request) => {
        bodies.push(await request.json());
        return json(201, { ...rule, id: 6, name: "broker down", metric: "broker_down", threshold: 0 });
      },
    });
    const { user } = renderApp("/alerts/rules");

    await screen.findByRole("table", { name: "Alert rules" }, FIRST_RENDER);
    await user.click(screen.getByRole("button", { name: "New rule" }));
    const dialog = screen.getByRole("dialog", { name: "New alert rule" });
    await user.type(within(dialog).getByLabelText("Name"), "broker down");
    await user.selectOptions(within(dialog).getByLabelText("Metric"), "broker_down");
    expect(within(dialog).getByLabelText("Threshold")).toHaveValue("0");
    expect(within(dialog).getByLabelText("Brokers")).toHaveValue("*");
    expect(within(dialog).queryByLabelText("Topics")).not.toBeInTheDocument();
    expect(within(dialog).queryByLabelText("Consumer groups")).not.toBeInTheDocument();

    await user.selectOptions(within(dialog).getByLabelText("Metric"), "under_replicated_partitions");
    expect(within(dialog).queryByLabelText("Brokers")).not.toBeInTheDocument();
    await user.selectOptions(within(dialog).getByLabelText("Metric"), "disk_usage_percent");
    expect(within(dialog).getByLabelText("Threshold")).toHaveValue("85");
    await user.selectOptions(within(dialog).getByLabelText("Metric"), "broker_down");
    await user.click(within(dialog).getByRole("button", { name: "Create rule" }));
    await waitFor(() => expect(bodies).toHaveLength(1));
    expect(bodies[0]).toMatchObject({ metric: "broker_down", threshold: 0, group_pattern: "*", statuses: [] });
  });

  it("offers a viewer no changes to rules, silences or channels", async () => {
    stubAlerts("viewer");
    renderApp("/alerts/rules");
    expect(await screen.findByRole("table", { name: "Alert rules" }, FIRST_RENDER)).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole("button", { name: "New rule" })).not.toBeInTheDocument());
    expect(screen.queryByRole("button", { name: "Edit" })).not.toBeInTheDocument();
  });

  it("creates a silence and expires one", async () => {
    const bodies: Record<string, unknown>[] = [];
    const fetchSpy = stubAlerts("developer", {
      "POST /api/v1/alert-silences/": async (request: Request) => {
        bodies.push((await request.json()) as Record<string, unknown>);
        return json(201, { ...silence, id: 12 });
      },
      "POST /api/v1/alert-silences/11/expire/": json(200, { ...silence, state: "expired" }),
    });
    const { user } = renderApp("/alerts/silences");

    const table = await screen.findByRole("table", { name: "Silences" }, FIRST_RENDER);
    expect(table).toHaveTextContent("group payments-*, rule payments fall behind");
    await user.click(within(table).getByRole("button", { name: "Expire" }));
    await waitFor(() =>
      expect(requestsOf(fetchSpy).some((request) => request.url.endsWith("/alert-silences/11/expire/"))).toBe(true),
    );

    await user.click(screen.getByRole("button", { name: "New silence" }));
    const dialog = screen.getByRole("dialog", { name: "New silence" });
    await user.click(within(dialog).getByRole("button", { name: "Silence" }));
    expect(within(dialog).getByLabelText("Comment")).toHaveAccessibleDescription("Say why, so others know.");
    await user.selectOptions(within(dialog).getByLabelText("Rule"), "3");
    await user.type(within(dialog).getByLabelText("Comment"), "deploying");
    await user.click(within(dialog).getByRole("button", { name: "Silence" }));
    await waitFor(() => expect(bodies).toHaveLength(1));
    expect(bodies[0]).toMatchObject({ team: 1, rule: 3, group_pattern: "*", comment: "deploying" });
    const hours = (Date.parse(String(bodies[0]!.ends_at)) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(1.9);
    expect(hours).toBeLessThan(2.1);
  });

  it("shows a new webhook's secret once and sends a test notification", async () => {
    let polls = 0;
    const queued: Notification = {
      id: 40,
      alert: null,
      channel: 8,
      channel_name: "on-call",
      kind: "test",
      status: "pending",
      silence: null,
      summary: "Test notification",
      attempt_count: 0,
      last_error: "",
      created_at: "2026-01-05T10:00:00Z",
      sent_at: null,
      attempts: [],
    };
    stubAlerts("developer", {
      "POST /api/v1/alert-channels/": json(201, { ...hook, id: 9, name: "pager", secret: "whsec_abc123" }),
      "POST /api/v1/alert-channels/8/test/": json(202, queued),
      "GET /api/v1/alert-notifications/40/": () => {
        polls += 1;
        return polls === 1
          ? json(200, queued)
          : json(200, {
              ...queued,
              status: "sent",
              attempts: [
                {
                  number: 1,
                  started_at: "2026-01-05T10:00:01Z",
                  duration_ms: 12,
                  status_code: 204,
                  error: "",
                  succeeded: true,
                },
              ],
            });
      },
    });
    const { user } = renderApp("/alerts/channels");

    const table = await screen.findByRole("table", { name: "Channels" }, FIRST_RENDER);
    await user.click(within(table).getByRole("button", { name: "Send test" }));
    expect(
      await screen.findByText("Test notification delivered (HTTP 204).", {}, { timeout: 8000 }),
    ).toBeInTheDocument();

    await user.click(screen.getByRole("button", { name: "New channel" }));
    const dialog = screen.getByRole("dialog", { name: "New channel" });
    await user.type(within(dialog).getByLabelText("Name"), "pager");
    await user.type(within(dialog).getByLabelText("URL"), "ftp://nope");
    await user.click(within(dialog).getByRole("button", { name: "Create channel" }));
    expect(within(dialog).getByLabelText("URL")).toHaveAccessibleDescription("An http:// or https:// address.");
    await user.clear(within(dialog).getByLabelText("URL"));
    await user.type(within(dialog).getByLabelText("URL"), "https://example.com/pager");
    await user.click(within(dialog).getByRole("button", { name: "Create channel" }));

    expect(await within(dialog).findByLabelText("Signing secret of pager")).toHaveValue("whsec_abc123");
    await user.click(within(dialog).getByRole("button", { name: "I have saved it" }));
    expect(screen.queryByDisplayValue("whsec_abc123")).not.toBeInTheDocument();
  });
});
