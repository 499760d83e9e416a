import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { cluster, logLine, operation } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import {
  membership,
  page,
  payments,
  paymentsPolicy,
  paymentsPrefix,
  query,
  search,
  signedInHandlers,
} from "../test/tenancyFixtures";
import { topic, topicDetail } from "../test/topicFixtures";
import { preferredTeam } from "./topics/CreateTopicForm";
import { filterTopicRows, type TopicRow } from "./TopicsPage";

// The machine running the suite is shared and slow at times; pages wait on several requests.
configure({ asyncUtilTimeout: 10_000 });

type Handlers = Parameters<typeof stubFetch>[0];

function stubTopics(role: Parameters<typeof membership>[3] = "developer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", role)] }),
    "GET /api/v1/teams/": page([payments, search]),
    "GET /api/v1/clusters/": page([cluster(), cluster({ id: 4, name: "analytics" })]),
    "GET /api/v1/topics/": page([
      topic(),
      topic({ id: 31, name: "search.clicks", team: 2, cluster: 4, observed_partitions: 6, partitions: 3 }),
      topic({ id: 32, name: "legacy.events", team: null, managed: false }),
    ]),
    "GET /api/v1/operations/": page([]),
    "GET /api/v1/managed-resources/": page([
      {
        id: 5,
        kind: "Topic",
        name: "payments.orders",
        team: 1,
        team_slug: "payments",
        cluster: 3,
        cluster_name: "orders",
        resource_id: 30,
        file_set: "repo/kafka",
        change_set: 7,
        change_set_created_at: "2026-01-01T00:00:00Z",
        labels: {},
        spec: {},
        updated_at: "2026-01-01T00:00:00Z",
      },
    ]),
    ...extra,
  });
}

function manyRows(count: number): TopicRow[] {
  return Array.from({ length: count }, (_, index) => {
    const name = `team-${index % 40}.topic-${index}`;
    return {
      topic: topic({ id: index + 1, name }),
      clusterName: "orders",
      teamName: `Team ${index % 40}`,
      status: "in_sync",
      managedAsCode: undefined,
      haystack: `${name} orders team ${index % 40}`.toLowerCase(),
    };
  });
}

describe("TopicsPage", { timeout: 30_000 }, () => {
  it("lists topics with cluster, team, partitions and drift", async () => {
    stubTopics();
    renderApp("/topics");

    const table = await screen.findByRole("table", { name: "Topics" });
    const orders = within(table).getByRole("row", { name: /payments\.orders/ });
    expect(within(orders).getByRole("link", { name: "payments.orders" })).toHaveAttribute("href", "/topics/30");
    expect(orders).toHaveTextContent("Payments");
    expect(orders).toHaveTextContent("2.0 KiB");
    expect(orders).toHaveTextContent("in sync");
    expect(within(orders).getByLabelText("Managed as code: File set repo/kafka, change set #7")).toHaveTextContent(
      "as code · repo/kafka #7",
    );
    const clicks = within(table).getByRole("row", { name: /search\.clicks/ });
    expect(clicks).toHaveTextContent("analytics");
    expect(clicks).toHaveTextContent("drift");
    expect(clicks).not.toHaveTextContent("as code");
    expect(within(table).getByRole("row", { name: /legacy\.events/ })).toHaveTextContent("unmanaged");
  });

  it("filters by search, cluster and team, and keeps them in the URL", async () => {
    stubTopics();
    const { router, user } = renderApp("/topics?team=1");

    const table = await screen.findByRole("table", { name: "Topics" });
    expect(within(table).queryByText("search.clicks")).not.toBeInTheDocument();
    expect(screen.getByLabelText("Team")).toHaveValue("1");

    await user.selectOptions(screen.getByLabelText("Team"), "");
    await user.type(screen.getByLabelText("Search topics"), "clicks");
    await waitFor(() => expect(screen.getByTestId("topic-count")).toHaveTextContent("1 of 3 topics"));
    expect(within(table).getByText("search.clicks")).toBeInTheDocument();
    expect(within(table).queryByText("payments.orders")).not.toBeInTheDocument();
    // The URL follows once typing pauses.
    await waitFor(() => expect(router.state.location.search).toBe("?q=clicks"));

    await user.selectOptions(screen.getByLabelText("Cluster"), "3");
    // Both filters, in whichever order the debounced search and the select wrote them (on a loaded machine the
    // search's write can land after the select's).
    await waitFor(() =>
      expect(Object.fromEntries(new URLSearchParams(router.state.location.search))).toEqual({
        q: "clicks",
        cluster: "3",
      }),
    );
    expect(await screen.findByText("No topics match")).toBeInTheDocument();
  });

  it("filters 2,000 topics in well under 100 ms", () => {
    const rows = manyRows(2000);
    const started = performance.now();
    const ofTeam7 = filterTopicRows(rows, "TEAM-7.");
    const oneTopic = filterTopicRows(rows, "team-39. topic-1999");
    const elapsed = performance.now() - started;
    expect(ofTeam7).toHaveLength(50);
    expect(ofTeam7.every((row) => row.teamName === "Team 7")).toBe(true);
    expect(oneTopic.map((row) => row.topic.name)).toEqual(["team-39.topic-1999"]);
    expect(filterTopicRows(rows, "  ")).toHaveLength(2000);
    expect(elapsed).toBeLessThan(100);
  });

  it("renders a 2,000-topic list as a virtual window and narrows it by search", async () => {
    stubTopics("developer", {
      "GET /api/v1/topics/": (request) => {
        const offset = Number(query(request).get("offset"));
        const limit = Number(query(request).get("limit"));
        const all = Array.from({ length: 2000 }, (_, index) => topic({ id: index + 1, name: `payments.t${index}` }));
        return page(all.slice(offset, offset + limit), all.length);
      },
    });
    const { user } = renderApp("/topics");

    const table = await screen.findByRole("table", { name: "Topics" });
    expect(screen.getByTestId("topic-count")).toHaveTextContent("2000 topics");
    // Only the rows in view (plus a few) are in the DOM.
    expect(within(table).getAllByRole("row").length).toBeLessThan(60);

    await user.type(screen.getByLabelText("Search topics"), "t1999");
    await waitFor(() => expect(screen.getByTestId("topic-count")).toHaveTextContent("1 of 2000 topics"));
    expect(within(table).getByText("payments.t1999")).toBeInTheDocument();
  });

  it("shows loading, empty and error states", async () => {
    stubTopics("developer", { "GET /api/v1/topics/": page([]) });
    renderApp("/topics");
    expect(screen.getByRole("status")).toBeInTheDocument();
    expect(await screen.findByText("No topics yet")).toBeInTheDocument();
  });

  it("shows an error when the topics cannot be loaded", async () => {
    stubTopics("developer", {
      "GET /api/v1/topics/": json(503, { error: { code: "unavailable", message: "Try later.", details: {} } }),
    });
    renderApp("/topics");
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the topics");
  });

  it("preselects the person's own team, else the newest, never just the alphabetically first", async () => {
    const alpha = { ...payments, id: 5, name: "Alpha", slug: "alpha", created_at: "2025-01-01T10:00:00Z" };
    const zebra = { ...payments, id: 6, name: "Zebra", slug: "zebra", created_at: "2026-06-01T10:00:00Z" };
    const teams = [alpha, payments, search, zebra];
    expect(preferredTeam(teams, new Set())).toBe(6);
    expect(preferredTeam(teams, new Set([2]))).toBe(2);
    expect(preferredTeam(teams, new Set([2]), 5)).toBe(5);

    stubFetch({
      ...signedInHandlers({ orgAdminOf: [10] }),
      "GET /api/v1/teams/": page(teams),
      "GET /api/v1/clusters/": page([cluster()]),
      "GET /api/v1/topics/": page([topic()]),
      "GET /api/v1/operations/": page([]),
      "GET /api/v1/policies/": page([]),
      "GET /api/v1/prefixes/": page([]),
    });
    const { user } = renderApp("/topics");
    await user.click(await screen.findByRole("button", { name: "Create topic" }));
    // An org admin who just created Zebra gives it its first topic.
    expect(within(screen.getByRole("dialog", { name: "Create topic" })).getByLabelText("Team")).toHaveValue("6");
  });

  it("offers no create button to a viewer", async () => {
    stubTopics("viewer");
    renderApp("/topics");
    await screen.findByRole("table", { name: "Topics" });
    await waitFor(() => expect(screen.queryByRole("button", { name: "Create topic" })).not.toBeInTheDocument());
  });

  it("validates a new topic without creating it, then creates it", async () => {
    const fetchSpy = stubTopics("developer", {
      "GET /api/v1/policies/": page([paymentsPolicy]),
      "GET /api/v1/prefixes/": page([paymentsPrefix]),
      "POST /api/v1/topics/": async (request) => {
        const body = await request.clone().json();
        return body.validate_only ? json(200, body) : json(201, topic({ id: 44, name: body.name }));
      },
      "GET /api/v1/topics/44/": json(200, topicDetail({ id: 44, name: "payments.refunds" })),
    });
    const { router, user } = renderApp("/topics");

    await user.click(await screen.findByRole("button", { name: "Create topic" }));
    const dialog = screen.getByRole("dialog", { name: "Create topic" });
    const name = within(dialog).getByLabelText("Name");
    await waitFor(() => expect(name).toHaveAccessibleDescription(/payments\./));
    expect(within(dialog).getByLabelText("Partitions")).toHaveAccessibleDescription(
      "Up to 12 per topic, 3000 for the team.",
    );
    expect(within(dialog).getByLabelText("Guardrails")).toHaveTextContent(
      /retention\.ms at most 30 days; segment\.bytes 1\.0 MiB to 1\.0 GiB/,
    );
    expect(within(dialog).getByLabelText("Cluster")).toHaveAccessibleDescription(
      "12 of 4,000 partition replicas in use (4,000 per broker on 1); a topic needs partitions × replication factor.",
    );

    await user.type(name, "refunds");
    await user.click(within(dialog).getByRole("button", { name: "Validate" }));
    expect(name).toHaveAccessibleDescription(/must start with one of the team's prefixes: payments\./);

    await user.clear(name);
    await user.type(name, "payments.refunds");
    await user.click(within(dialog).getByRole("button", { name: "Add config" }));
    await user.type(within(dialog).getByLabelText("Config 1"), "retention.ms");
    await user.type(within(dialog).getByLabelText("Value 1"), "60000");
    await user.click(within(dialog).getByRole("button", { name: "Validate" }));
    expect(await within(dialog).findByText(/The cluster accepts payments\.refunds/)).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/topics");

    await user.click(within(dialog).getByRole("button", { name: "Create topic" }));
    expect(await screen.findByRole("heading", { level: 1, name: "payments.refunds" })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/topics/44");
    const posts = requestsOf(fetchSpy).filter((request) => request.method === "POST");
    expect(await posts[0]!.json()).toEqual({
      team: 1,
      cluster: 3,
      name: "payments.refunds",
      partitions: 3, // no replication_factor: the cluster's default
      configs: { "retention.ms": "60000" },
      validate_only: true,
    });
    expect((await posts[1]!.json()).validate_only).toBe(false);
  });

  it("follows the operation when the cluster does not confirm a creation in time", async () => {
    const confirming = operation({
      id: 77,
      kind: "topic_create",
      state: "running",
      resource_type: "topic",
      resource_name: "payments.big",
      steps: ["check guardrails", "send to the cluster", "confirm on the cluster"],
      step: 3,
      step_count: 3,
      step_name: "confirm on the cluster",
      log: [logLine("no answer from the cluster (REQUEST_TIMED_OUT); reading it back")],
    });
    let polls = 0;
    stubTopics("developer", {
      "GET /api/v1/policies/": page([paymentsPolicy]),
      "GET /api/v1/prefixes/": page([paymentsPrefix]),
      "POST /api/v1/topics/": json(202, {
        operation: confirming,
        operation_url: "/api/v1/operations/77/",
        cluster: cluster(),
      }),
      "GET /api/v1/operations/77/": () => {
        polls += 1;
        return json(
          200,
          polls > 1 ? { ...confirming, state: "succeeded", log: [logLine("confirmed on the cluster")] } : confirming,
        );
      },
    });
    const { router, user } = renderApp("/topics");

    await user.click(await screen.findByRole("button", { name: "Create topic" }));
    const dialog = screen.getByRole("dialog", { name: "Create topic" });
    await user.type(within(dialog).getByLabelText("Name"), "payments.big");
    await user.click(within(dialog).getByRole("button", { name: "Create topic" }));

    expect(await within(dialog).findByText(/did not confirm payments\.big in time/)).toBeInTheDocument();
    const progress = await within(dialog).findByRole("group", { name: "Creating topic payments.big" });
    expect(progress).toHaveTextContent(/running|confirm on the cluster/);
    await waitFor(() => expect(within(progress).getByText("succeeded")).toBeInTheDocument());
    expect(within(progress).getByText("confirmed on the cluster")).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/topics");
  });
});
