import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { Broker } from "../api/types";
import { acme, cluster, clusterDetail, operation } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { page, signedInHandlers } from "../test/tenancyFixtures";

configure({ asyncUtilTimeout: 10_000 });

type Handlers = Parameters<typeof stubFetch>[0];

function broker(nodeId: number, overrides: Partial<Broker> = {}): Broker {
  const controller = nodeId <= 3;
  return {
    node_id: nodeId,
    host: "127.0.0.1",
    port: 19090 + nodeId,
    controller_port: controller ? 19190 + nodeId : 0,
    metrics_port: 0,
    rack: "",
    roles: controller ? ["broker", "controller"] : ["broker"],
    health: "up",
    status: "running",
    pid: 4000 + nodeId,
    restart_count: 0,
    last_seen: "2026-01-05T10:00:00Z",
    configs: null,
    ...overrides,
  };
}

const replicated = clusterDetail({
  broker_count: 4,
  brokers: [broker(1), broker(2), broker(3, { health: "down", status: "dead" }), broker(4)],
  status: "degraded",
  status_reason: "Broker 3 is not running; restarting it.",
  health: {
    reachable: true,
    brokers_up: 3,
    brokers_expected: 4,
    broker_ids: [1, 2, 4],
    dead_broker_ids: [3],
    controller_id: 1,
    topic_count: 2,
    partition_count: 6,
    offline_partitions: 0,
    under_replicated_partitions: 4,
    error: "",
  },
});

const moving = {
  percent: 40,
  partitions: [
    {
      topic: "payments.orders",
      partition: 0,
      replicas: [1, 2, 4, 3],
      target: [1, 2, 4],
      adding: [4],
      removing: [3],
      leader: 1,
      leader_bytes: 1000,
      adding_bytes: [{ node_id: 4, bytes: 400 }],
      percent: 40,
    },
  ],
};
const nothingMoving = { percent: 100, partitions: [] };

function stubReplicated(options: { orgAdmin: boolean }, extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ orgAdminOf: options.orgAdmin ? [10] : [] }),
    "GET /api/v1/organizations/": page([acme]),
    "GET /api/v1/clusters/3/": json(200, replicated),
    "GET /api/v1/operations/": page([]),
    "GET /api/v1/clusters/3/reassignments/": json(200, moving),
    ...extra,
  });
}

describe("ClusterDetailPage for a replicated cluster", { timeout: 30_000 }, () => {
  it("shows each broker's role and status and a degraded banner with the counts", async () => {
    stubReplicated({ orgAdmin: false });
    renderApp("/clusters/3/brokers");

    const banner = await screen.findByRole("alert");
    expect(banner).toHaveTextContent("Degraded: 4 partitions under-replicated · broker 3 down");
    expect(banner).toHaveTextContent("Broker 3 is not running; restarting it.");
    const rows = within(screen.getByRole("table", { name: "Brokers" })).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("127.0.0.1:19091");
    expect(rows[1]).toHaveTextContent("controller + broker");
    expect(rows[3]).toHaveTextContent("down");
    expect(rows[4]).toHaveTextContent("broker");
    expect(rows[4]).not.toHaveTextContent("controller");
    // Only org admins add or remove brokers.
    expect(screen.queryByRole("button", { name: "Add broker" })).not.toBeInTheDocument();
  });

  it("shows moving partitions with progress bars and polls until nothing moves", async () => {
    let polls = 0;
    stubReplicated(
      { orgAdmin: false },
      {
        "GET /api/v1/clusters/3/reassignments/": () => {
          polls += 1;
          return json(200, polls === 1 ? moving : nothingMoving);
        },
      },
    );
    renderApp("/clusters/3/brokers");

    const bar = await screen.findByRole("progressbar", { name: "payments.orders-0: 40% copied" });
    expect(bar).toHaveAttribute("aria-valuenow", "40");
    expect(screen.getByRole("progressbar", { name: "All moves: 40% copied" })).toBeInTheDocument();
    expect(screen.getByText(/400 B of 1000 B copied from leader 1/)).toBeInTheDocument();
    expect(await screen.findByText("No partitions are moving")).toBeInTheDocument();
    expect(polls).toBe(2);
  });

  it("says when the reassignments cannot be read", async () => {
    stubReplicated(
      { orgAdmin: false },
      {
        "GET /api/v1/clusters/3/reassignments/": json(503, {
          error: { code: "cluster_unreachable", message: "The cluster did not answer.", details: {} },
        }),
      },
    );
    renderApp("/clusters/3/brokers");

    expect(await screen.findByText("Could not load the reassignments")).toBeInTheDocument();
  });

  it("adds a broker and follows the operation", async () => {
    const adding = operation({ id: 61, kind: "add_broker", state: "running", step: 3, step_name: "start brokers" });
    let added = false;
    stubReplicated(
      { orgAdmin: true },
      {
        "GET /api/v1/clusters/3/reassignments/": json(200, nothingMoving),
        "POST /api/v1/clusters/3/brokers/": () => {
          added = true;
          return json(202, {
            operation: adding,
            operation_url: "http://localhost/api/v1/operations/61/",
            cluster: cluster(),
          });
        },
        "GET /api/v1/operations/": () => page(added ? [adding] : []),
        "GET /api/v1/operations/61/": json(200, adding),
      },
    );
    const { user } = renderApp("/clusters/3/brokers");

    await user.click(await screen.findByRole("button", { name: "Add broker" }));

    const progress = await screen.findByRole("group", { name: "Adding a broker orders" });
    expect(within(progress).getByRole("progressbar", { name: "Step 3 of 5: start brokers" })).toBeInTheDocument();
  });

  it("removes a broker-only node after its node id is typed; voters cannot be removed", async () => {
    const fetchSpy = stubReplicated(
      { orgAdmin: true },
      {
        "GET /api/v1/clusters/3/reassignments/": json(200, nothingMoving),
        "DELETE /api/v1/clusters/3/brokers/4/": json(202, {
          operation: operation({ id: 62, kind: "remove_broker", state: "pending" }),
          operation_url: "http://localhost/api/v1/operations/62/",
          cluster: cluster(),
        }),
        "GET /api/v1/operations/62/": json(200, operation({ id: 62, kind: "remove_broker", state: "pending" })),
      },
    );
    const { user } = renderApp("/clusters/3/brokers");

    const rows = within(await screen.findByRole("table", { name: "Brokers" })).getAllByRole("row");
    expect(within(rows[1]!).queryByRole("button", { name: /Remove broker/ })).not.toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Remove broker 4" }));
    const confirm = screen.getByRole("alertdialog", { name: "Remove broker 4?" });
    const submit = within(confirm).getByRole("button", { name: "Remove" });
    await user.type(within(confirm).getByRole("textbox"), "3");
    expect(submit).toBeDisabled();
    await user.clear(within(confirm).getByRole("textbox"));
    await user.type(within(confirm).getByRole("textbox"), "4");
    await user.click(submit);

    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    const sent = requestsOf(fetchSpy).find((request) => request.method === "DELETE")!;
    expect(await sent.json()).toEqual({ confirm_node_id: 4 });
  });

  it("replaces a controller node after its node id is typed", async () => {
    const fetchSpy = stubReplicated(
      { orgAdmin: true },
      {
        "GET /api/v1/clusters/3/reassignments/": json(200, nothingMoving),
        "POST /api/v1/clusters/3/brokers/1/replace-controller/": json(202, {
          operation: operation({ id: 63, kind: "replace_controller", state: "pending" }),
          operation_url: "http://localhost/api/v1/operations/63/",
          cluster: cluster(),
        }),
        "GET /api/v1/operations/63/": json(200, operation({ id: 63, kind: "replace_controller", state: "pending" })),
      },
    );
    const { user } = renderApp("/clusters/3/brokers");

    await user.click(await screen.findByRole("button", { name: "Replace controller 1" }));
    const confirm = screen.getByRole("alertdialog", { name: "Replace controller 1?" });
    await user.type(within(confirm).getByRole("textbox"), "1");
    await user.click(within(confirm).getByRole("button", { name: "Replace" }));

    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    const sent = requestsOf(fetchSpy).find((request) => request.url.endsWith("/replace-controller/"))!;
    expect(await sent.json()).toEqual({ confirm_node_id: 1 });
    expect(await screen.findByRole("group", { name: /Replacing a controller/ })).toBeInTheDocument();
  });

  it("moves a topic's replicas onto a broker", async () => {
    const fetchSpy = stubReplicated(
      { orgAdmin: true },
      {
        "GET /api/v1/clusters/3/reassignments/": json(200, nothingMoving),
        "POST /api/v1/clusters/3/reassignments/": json(202, {
          requested: [{ topic: "payments.orders", partition: 0, replicas: [1, 2, 4] }],
        }),
      },
    );
    const { user } = renderApp("/clusters/3/brokers");

    const form = await screen.findByRole("form", { name: "Move a topic onto a broker" });
    await user.type(within(form).getByLabelText("Topic"), "payments.orders");
    await user.selectOptions(within(form).getByLabelText("Onto broker"), "4");
    await user.click(within(form).getByRole("button", { name: "Move replicas" }));

    expect(await screen.findByText("Moving 1 partition.")).toBeInTheDocument();
    const sent = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await sent.json()).toEqual({ topic: "payments.orders", onto_broker: 4 });
  });
});
