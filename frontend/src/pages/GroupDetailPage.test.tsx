import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { cluster } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { bodyCellTexts } from "../test/tables";
import { membership, page, payments, signedInHandlers } from "../test/tenancyFixtures";
import { GroupDetailPage } from "./GroupDetailPage";
import { groupDetail, groupLag, lagChart, offsetReset } from "./groups/groupFixtures";
import { renderPage } from "../test/renderPage";

type Handlers = Parameters<typeof stubFetch>[0];

function stubGroup(role: "developer" | "viewer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(1, payments.id, "me", role)] }),
    "GET /api/v1/clusters/": page([cluster()]),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/consumer-groups/31/": json(200, groupDetail()),
    "GET /api/v1/consumer-groups/31/resets/": json(200, []),
    "GET /api/v1/lag/groups/31/": json(404, { error: { code: "not_found", message: "Not found.", details: {} } }),
    ...extra,
  });
}

const renderGroup = () => renderPage(<GroupDetailPage />, "/groups/:id", "/groups/31");

describe("GroupDetailPage", () => {
  it("shows the group's state, members with their assignments and lag per partition", async () => {
    stubGroup("viewer", {
      "GET /api/v1/consumer-groups/31/": json(
        200,
        groupDetail({
          live: {
            ...groupDetail().live,
            state: "STABLE",
            protocol: "range",
            members: [
              {
                member_id: "m-1",
                client_id: "billing-1",
                host: "/10.0.0.5",
                assignments: [
                  { topic: "payments.orders", partition: 1 },
                  { topic: "payments.orders", partition: 0 },
                ],
              },
            ],
          },
        }),
      ),
    });
    renderGroup();

    expect(await screen.findByRole("heading", { name: "payments.billing" })).toBeInTheDocument();
    expect(screen.getByText(/1 member · 1,500 messages behind/)).toBeInTheDocument();
    expect(bodyCellTexts(screen.getByRole("table", { name: "Partition lag" }))).toEqual([
      ["payments.orders", "0", "100", "1,100", "1,000", "billing-1"],
      ["payments.orders", "1", "400", "900", "500", "billing-1"],
    ]);
    expect(bodyCellTexts(screen.getByRole("table", { name: "Members" }))).toEqual([
      ["billing-1", "/10.0.0.5", "payments.orders-0, payments.orders-1", "m-1"],
    ]);
  });

  it("shows a share group's backlog per share-partition and lets developers change its delivery settings", async () => {
    const fetchSpy = stubGroup("developer", {
      "GET /api/v1/consumer-groups/31/": json(
        200,
        groupDetail({
          group_type: "share",
          live: {
            ...groupDetail().live,
            state: "STABLE",
            protocol: "simple",
            total_lag: 6,
            share_partitions: [
              {
                topic: "payments.jobs",
                partition: 0,
                start_offset: 4,
                log_end_offset: 5,
                in_flight: 1,
                acknowledged: 0,
                lag: 1,
              },
              {
                topic: "payments.jobs",
                partition: 1,
                start_offset: 0,
                log_end_offset: 5,
                in_flight: 5,
                acknowledged: 0,
                lag: 5,
              },
            ],
            share_configs: [
              { name: "share.record.lock.duration.ms", value: "30000", source: "DEFAULT_CONFIG" },
              { name: "share.auto.offset.reset", value: "earliest", source: "GROUP_CONFIG" },
            ],
          },
        }),
      ),
      "POST /api/v1/consumer-groups/31/share-configs/": { status: 204 },
    });
    const { user } = renderGroup();

    expect(await screen.findByText(/6 messages not yet acknowledged/)).toBeInTheDocument();
    expect(screen.getByText("Share (queue)")).toBeInTheDocument();
    expect(bodyCellTexts(screen.getByRole("table", { name: "Share-partitions" }))).toEqual([
      ["payments.jobs", "1", "0", "5", "5", "0", "5"],
      ["payments.jobs", "0", "4", "5", "1", "0", "1"],
    ]);
    expect(screen.queryByRole("table", { name: "Partition lag" })).not.toBeInTheDocument();

    const settings = screen.getByRole("form", { name: "Delivery settings" });
    await user.type(within(settings).getByLabelText("share.record.lock.duration.ms"), "20000");
    await user.clear(within(settings).getByLabelText("share.auto.offset.reset"));
    await user.click(within(settings).getByRole("button", { name: "Save delivery settings" }));
    expect(await within(settings).findByRole("status")).toHaveTextContent("Saved.");
    const sent = requestsOf(fetchSpy).find((request) => request.url.includes("/share-configs/"))!;
    expect(await sent.json()).toEqual({
      set: { "share.record.lock.duration.ms": "20000" },
      delete: ["share.auto.offset.reset"],
    });
  });

  it("shows a Streams group's members with their tasks and its topology", async () => {
    stubGroup("viewer", {
      "GET /api/v1/consumer-groups/31/": json(
        200,
        groupDetail({
          group_type: "streams",
          live: {
            ...groupDetail().live,
            state: "STABLE",
            protocol: "streams",
            streams: {
              group_epoch: 3,
              topology_epoch: 0,
              subtopologies: [
                {
                  subtopology_id: "0",
                  source_topics: ["payments.orders"],
                  repartition_sink_topics: [],
                  state_changelog_topics: ["app-counts-changelog"],
                  repartition_source_topics: [],
                },
              ],
              members: [
                {
                  member_id: "m-1",
                  client_id: "app-1",
                  host: "/10.0.0.5",
                  process_id: "p-1",
                  member_epoch: 3,
                  active_tasks: [{ subtopology: "0", partitions: [0, 1] }],
                  standby_tasks: [],
                  warmup_tasks: [{ subtopology: "0", partitions: [2] }],
                },
              ],
            },
          },
        }),
      ),
    });
    renderGroup();

    expect(await screen.findByText("Streams")).toBeInTheDocument();
    expect(bodyCellTexts(screen.getByRole("table", { name: "Streams members" }))).toEqual([
      ["app-1", "p-1", "/10.0.0.5", "3", "0: 0, 1", "—", "0: 2"],
    ]);
    expect(bodyCellTexts(screen.getByRole("table", { name: "Subtopologies" }))).toEqual([
      ["0", "payments.orders", "—", "—", "app-counts-changelog"],
    ]);
    expect(screen.getByRole("heading", { name: "Topology (epoch 0)" })).toBeInTheDocument();
  });

  it("offers no reset to viewers", async () => {
    stubGroup("viewer");
    renderGroup();
    expect(await screen.findByText(/Developers of the group's team can reset its offsets/)).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Preview reset" })).not.toBeInTheDocument();
  });

  it("previews a reset with the lag it leaves, applies it after confirmation and undoes it", async () => {
    let resets: unknown[] = [];
    const fetchSpy = stubGroup("developer", {
      "GET /api/v1/consumer-groups/31/resets/": () => json(200, resets),
      "POST /api/v1/consumer-groups/31/reset-offsets/preview/": json(200, [
        { topic: "payments.orders", partition: 0, old_offset: 100, new_offset: 0 },
        { topic: "payments.orders", partition: 1, old_offset: 400, new_offset: 900 },
      ]),
      "POST /api/v1/consumer-groups/31/reset-offsets/": () => {
        resets = [offsetReset({ strategy: "shift" })];
        return json(201, resets[0]);
      },
      "POST /api/v1/consumer-groups/31/undo-reset/": () => {
        resets = [offsetReset({ strategy: "shift", undone_at: "2026-01-05T11:05:00Z" })];
        return json(200, resets[0]);
      },
    });
    const { user } = renderGroup();

    const form = await screen.findByRole("form", { name: "Describe the offset reset" });
    expect(await screen.findByText("No resets yet")).toBeInTheDocument();
    await user.selectOptions(within(form).getByLabelText("Strategy"), "shift");
    await user.click(within(form).getByRole("button", { name: "Preview reset" }));
    expect(await within(form).findByRole("alert")).toHaveTextContent("Shift by a whole number");

    await user.type(within(form).getByLabelText("Shift by"), "-100");
    await user.click(within(form).getByRole("checkbox", { name: "payments.orders" }));
    await user.click(within(form).getByRole("button", { name: "Preview reset" }));

    const preview = await screen.findByRole("table", { name: "Reset preview" });
    expect(bodyCellTexts(preview)).toEqual([
      ["payments.orders", "0", "100", "0", "1,000", "1,100 (+100)"],
      ["payments.orders", "1", "400", "900", "500", "0 (−500)"],
    ]);
    const previewBody = await requestsOf(fetchSpy)
      .find((request) => request.url.endsWith("/reset-offsets/preview/"))!
      .json();
    expect(previewBody).toEqual({ strategy: "shift", topics: ["payments.orders"], shift_by: -100 });

    await user.click(screen.getByRole("button", { name: "Apply reset" }));
    const dialog = screen.getByRole("alertdialog", { name: "Reset offsets of payments.billing" });
    const confirm = within(dialog).getByRole("button", { name: "Apply reset" });
    expect(confirm).toBeDisabled();
    await user.type(within(dialog).getByRole("textbox"), "payments.billing");
    await user.click(confirm);

    expect(await screen.findByText(/Reset applied to 2 partitions/)).toBeInTheDocument();
    const applyRequest = requestsOf(fetchSpy).find((request) => request.url.endsWith("/reset-offsets/"))!;
    expect(await applyRequest.json()).toEqual(previewBody);
    expect(screen.queryByRole("table", { name: "Reset preview" })).not.toBeInTheDocument();

    await user.click(await screen.findByRole("button", { name: "Undo last reset" }));
    const undoDialog = screen.getByRole("alertdialog", { name: "Undo the last reset" });
    await user.type(within(undoDialog).getByRole("textbox"), "payments.billing");
    await user.click(within(undoDialog).getByRole("button", { name: "Undo reset" }));
    expect(await screen.findByText(/The last reset was undone/)).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole("button", { name: "Undo last reset" })).not.toBeInTheDocument());
    expect(bodyCellTexts(screen.getByRole("table", { name: "Reset history" }))[0]?.[1]).toBe("Shift by N messages");
  }, 30_000);

  it("will not apply while the group has members, and says why", async () => {
    stubGroup("developer", {
      "GET /api/v1/consumer-groups/31/": json(200, groupDetail({ live: { ...groupDetail().live, state: "STABLE" } })),
      "POST /api/v1/consumer-groups/31/reset-offsets/preview/": json(200, [
        { topic: "payments.orders", partition: 0, old_offset: 100, new_offset: 1100 },
      ]),
    });
    const { user } = renderGroup();
    await user.click(await screen.findByRole("button", { name: "Preview reset" }));
    await screen.findByRole("table", { name: "Reset preview" });
    expect(screen.getByText(/The group has active members/)).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Apply reset" })).toBeDisabled();
  });

  it("shows the API's refusal of a preview", async () => {
    stubGroup("developer", {
      "POST /api/v1/consumer-groups/31/reset-offsets/preview/": json(400, {
        error: { code: "unknown_topic", message: "Unknown topic: gone.", details: {} },
      }),
    });
    const { user } = renderGroup();
    await user.click(await screen.findByRole("button", { name: "Preview reset" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Unknown topic: gone.");
  });

  it("shows a not-found state for a group the person cannot see", async () => {
    stubGroup("viewer", {
      "GET /api/v1/consumer-groups/31/": json(404, {
        error: { code: "not_found", message: "Not found.", details: {} },
      }),
    });
    renderGroup();
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the consumer group");
  });

  it("says when the lag sampler has not seen the group yet", async () => {
    stubGroup("viewer");
    renderGroup();
    expect(await screen.findByText("Not sampled yet")).toBeInTheDocument();
  });

  it("shows the health with its reason, every partition's status and the lag chart by range and measure", async () => {
    const fetchSpy = stubGroup("viewer", {
      "GET /api/v1/lag/groups/31/": json(200, groupLag()),
      "GET /api/v1/lag/groups/31/chart/": json(200, lagChart()),
    });
    const { user, router } = renderGroup();

    const health = await screen.findByRole("region", { name: "Health and lag history" });
    // The group's status in the summary, and its one partition's in the table.
    expect(await within(health).findAllByText("stalled")).toHaveLength(2);
    expect(within(health).getAllByText(/Committed offset has not moved for 5 min/)).toHaveLength(2);
    expect(within(health).getByText(/1,500 messages · at least 2 min/)).toBeInTheDocument();
    expect(bodyCellTexts(within(health).getByRole("table", { name: "Partition health" }))[0]).toEqual([
      "payments.orders-0",
      "stalled",
      "Committed offset has not moved for 5 min",
      "1,000",
      "≥ 2 min",
      "0/s",
      "3/s",
      "—",
    ]);

    await user.click(await within(health).findByText("Show the data as a table"));
    const messages = within(health).getByRole("table", { name: "Lag in messages over the last 1h data" });
    expect(bodyCellTexts(messages).map((row) => row.slice(1))).toEqual([
      ["1.4K", "900", "500"],
      ["1.5K", "1K", "500"],
    ]);

    await user.click(within(health).getByRole("button", { name: "24h" }));
    await user.click(within(health).getByRole("button", { name: "Lag in seconds" }));
    expect(new URLSearchParams(router.state.location.search).get("range")).toBe("24h");
    // The new range loads afresh; its table opens on request like the first one.
    await user.click(await within(health).findByText("Show the data as a table"));
    const seconds = await within(health).findByRole("table", { name: "Lag in seconds over the last 24h data" });
    expect(bodyCellTexts(seconds).map((row) => row.slice(1))).toEqual([
      ["1 min", "1 min", "—"],
      ["2 min", "2 min", "—"],
    ]);
    const chartRequests = requestsOf(fetchSpy).filter((request) => request.url.includes("/chart/"));
    const last = new URL(chartRequests.at(-1)!.url).searchParams;
    const span = Date.parse(last.get("until")!) - Date.parse(last.get("since")!);
    expect(span).toBe(24 * 3_600_000);
  }, 30_000);
});
