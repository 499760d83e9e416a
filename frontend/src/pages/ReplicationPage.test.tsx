import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { ReplicationFlow, ReplicationFlowDetail } from "../api/types";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { page, signedInHandlers } from "../test/tenancyFixtures";

configure({ asyncUtilTimeout: 10_000 });

const flow: ReplicationFlow = {
  id: 4,
  team: 1,
  name: "dr",
  source_cluster: 1,
  target_cluster: 2,
  connect_cluster: 3,
  source_alias: "dr",
  topics_pattern: "payments\\.orders.*",
  groups_pattern: "",
  replication_policy: "default",
  sync_topic_configs: true,
  sync_topic_acls: false,
  sync_group_offsets: true,
  checkpoint_interval_seconds: 60,
  offset_lag_max: 100,
  lag_alert_records: 10,
  state: "paused",
  state_reason: "",
  source_principal: "User:replication-4-source",
  target_principal: "User:replication-4-target",
  created_at: "2026-01-05T10:00:00Z",
  updated_at: "2026-01-05T10:00:00Z",
};

const detail: ReplicationFlowDetail = {
  ...flow,
  connectors: {},
  alert_state: "firing",
  alerts: [
    {
      id: 9,
      rule: 2,
      rule_name: "replica behind",
      state: "firing",
      severity: "warning",
      value: 50,
      reason: "Flow dr: 50 records not replicated yet, 50 on the worst partition; the flow is paused.",
      pending_since: "2026-01-05T10:01:00Z",
      fired_at: "2026-01-05T10:01:00Z",
      resolved_at: null,
    },
  ],
  lag_history: [
    { observed_at: "2026-01-05T10:00:00Z", lag_records: 0, max_partition_lag_records: 0, error: "" },
    { observed_at: "2026-01-05T10:01:00Z", lag_records: 50, max_partition_lag_records: 50, error: "" },
  ],
};

describe("ReplicationPage", () => {
  it("shows a flow's lag alert and sampled lag, and edits its threshold", async () => {
    const spy = stubFetch({
      ...signedInHandlers({ orgAdminOf: [1] }),
      "GET /api/v1/replication-flows/": page([flow]),
      "GET /api/v1/clusters/": page([]),
      "GET /api/v1/connect-clusters/": page([]),
      "GET /api/v1/teams/": page([]),
      "GET /api/v1/replication-flows/4/": json(200, detail),
      "GET /api/v1/replication-flows/4/lag/": json(200, []),
      "PATCH /api/v1/replication-flows/4/": json(200, { ...flow, lag_alert_records: 25 }),
    });
    const { user } = renderApp("/replication");
    await user.click(await screen.findByRole("button", { name: "dr" }));
    expect(await screen.findByTestId("flow-alert-state")).toHaveTextContent("firing");
    expect(
      within(screen.getByRole("list", { name: "Lag alerts" })).getByText(/50 records not replicated/),
    ).toBeTruthy();
    await user.click(screen.getByText("Show the data as a table"));
    const rows = within(screen.getByRole("table", { name: "Replication lag in records data" })).getAllByRole("row");
    expect(rows).toHaveLength(3);
    expect(rows[2]).toHaveTextContent("50");

    const threshold = screen.getByLabelText(/Lag alert threshold/);
    expect(threshold).toHaveValue("10");
    await user.clear(threshold);
    await user.type(threshold, "25");
    await user.click(screen.getByRole("button", { name: "Save threshold" }));
    await waitFor(() => {
      const patch = requestsOf(spy).find((request) => request.method === "PATCH");
      expect(patch?.url).toContain("/api/v1/replication-flows/4/");
    });
    const patch = requestsOf(spy).find((request) => request.method === "PATCH");
    expect(await patch?.json()).toEqual({ lag_alert_records: 25 });
  });
});
