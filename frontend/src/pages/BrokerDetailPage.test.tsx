import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { BrokerDetail } from "../api/types";
import { acme, clusterDetail } from "../test/clusterFixtures";
import { configEntry } from "../test/configFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { page, signedInHandlers } from "../test/tenancyFixtures";

function brokerDetail(overrides: Partial<BrokerDetail> = {}): BrokerDetail {
  return {
    node_id: 0,
    host: "127.0.0.1",
    port: 19092,
    rack: "eu-west-1a",
    listed: true,
    health: "up",
    is_active_controller: true,
    is_controller_voter: true,
    replica_count: 2,
    leader_count: 1,
    out_of_sync_count: 1,
    under_replicated_count: 1,
    messages_in_per_second: 12.5,
    log_dirs: [
      {
        path: "/data/broker-0",
        error: null,
        total_bytes: 100 * 1024 ** 3,
        usable_bytes: 75 * 1024 ** 3,
        size_bytes: 3 * 1024 ** 2,
        replica_count: 2,
      },
    ],
    log_dirs_error: "",
    metrics: {
      bytes_in_total: 2048,
      bytes_out_total: 4096,
      messages_in_total: 20,
      requests_total: 300,
      bytes_in_per_second: 1536.25,
      bytes_out_per_second: null,
      messages_in_per_second: 2,
      requests_per_second: 7.5,
      under_replicated_partitions: 1,
    },
    metrics_error: "",
    replicas: [
      {
        topic: "orders",
        partition: 0,
        leader: 0,
        is_leader: true,
        replicas: [0, 1],
        isr: [0, 1],
        in_sync: true,
        under_replicated: false,
        size_bytes: 2 * 1024 ** 2,
      },
      {
        topic: "orders",
        partition: 1,
        leader: 1,
        is_leader: false,
        replicas: [1, 0],
        isr: [1],
        in_sync: false,
        under_replicated: true,
        size_bytes: 1024 ** 2,
      },
    ],
    ...overrides,
  };
}

function stubBroker(broker: BrokerDetail | ReturnType<typeof json>, extra: Parameters<typeof stubFetch>[0] = {}) {
  return stubFetch({
    ...signedInHandlers({ orgAdminOf: [10] }),
    "GET /api/v1/organizations/": page([acme]),
    "GET /api/v1/clusters/3/": json(200, clusterDetail()),
    "GET /api/v1/clusters/3/brokers/0/": "status" in broker && !("node_id" in broker) ? broker : json(200, broker),
    ...extra,
  });
}

describe("BrokerDetailPage", () => {
  it("shows the broker's role, counts, disks, replicas and configs", async () => {
    stubBroker(brokerDetail());
    const { user } = renderApp("/clusters/3/brokers/0");

    expect(await screen.findByRole("heading", { level: 1, name: "Broker 0" })).toBeInTheDocument();
    expect(screen.getByText("active controller")).toBeInTheDocument();
    expect(screen.getByText("eu-west-1a")).toBeInTheDocument();
    expect(screen.getByText("12.5 /s as leader")).toBeInTheDocument();
    const metrics = screen.getByRole("region", { name: "Node metrics" });
    expect(metrics).toHaveTextContent("1,536.3 B/s");
    expect(metrics).toHaveTextContent("measured at the next refresh (within 30 s)");
    expect(metrics).toHaveTextContent("7.5 req/s");
    expect(metrics).toHaveTextContent("Under-replicated (node's own count)1");
    expect(screen.getByRole("link", { name: "orders" })).toHaveAttribute("href", "/clusters/3/brokers");
    expect(screen.getByText(/3\.0 MiB in 2 replicas · volume 25\.0 GiB of 100\.0 GiB used/)).toBeInTheDocument();
    expect(screen.getByRole("progressbar", { name: "Volume of /data/broker-0" })).toHaveAttribute(
      "aria-valuenow",
      "25",
    );

    const rows = within(screen.getByRole("table", { name: "Hosted replicas" })).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("leader");
    expect(rows[2]).toHaveTextContent("follower of 1");
    expect(within(rows[2]!).getByText("out of sync")).toBeInTheDocument();
    expect(within(rows[2]!).getByText("under-replicated")).toBeInTheDocument();
    expect(screen.queryByRole("table", { name: "Broker 0 configs" })).not.toBeInTheDocument();
    await user.click(screen.getByRole("tab", { name: "Configs" }));
    expect(screen.getByRole("table", { name: "Broker 0 configs" })).toHaveTextContent("log.retention.hours");
    expect(screen.queryByRole("table", { name: "Hosted replicas" })).not.toBeInTheDocument();
  });

  it("says when the rate is not sampled yet and when log dirs cannot be read", async () => {
    stubBroker(
      brokerDetail({
        messages_in_per_second: null,
        metrics: null,
        metrics_error: "127.0.0.1:9 did not answer",
        log_dirs: [],
        log_dirs_error: "ClusterUnreachable: _TRANSPORT",
        is_active_controller: false,
        is_controller_voter: false,
      }),
    );
    renderApp("/clusters/3/brokers/0");
    expect(await screen.findByText("not sampled yet")).toBeInTheDocument();
    expect(screen.getByText("No node metrics: 127.0.0.1:9 did not answer.")).toBeInTheDocument();
    expect(screen.getByText(/did not describe its log directories: ClusterUnreachable/)).toBeInTheDocument();
    expect(screen.getByText("broker")).toBeInTheDocument();
  });

  it("lets an org admin change a dynamic config and marks the others as config-file only", async () => {
    const detail = clusterDetail();
    detail.brokers[0]!.configs!["leader.replication.throttled.rate"] = configEntry({
      value: null,
      type: "long",
      unit: "bytes_per_second",
      documentation: "Bytes per second a leader may send to throttled followers.",
    });
    const fetchSpy = stubBroker(brokerDetail(), {
      "GET /api/v1/clusters/3/": json(200, detail),
      "PATCH /api/v1/clusters/3/brokers/0/configs/": json(200, { configs: {} }),
    });
    const { user } = renderApp("/clusters/3/brokers/0");
    await user.click(await screen.findByRole("tab", { name: "Configs" }));
    const table = screen.getByRole("table", { name: "Broker 0 configs" });
    expect(within(table).getByRole("row", { name: /num\.partitions/ })).toHaveTextContent("config file only");

    await user.click(within(table).getByRole("button", { name: "Edit leader.replication.throttled.rate" }));
    const dialog = screen.getByRole("dialog", { name: "Edit leader.replication.throttled.rate on broker 0" });
    await user.type(within(dialog).getByLabelText("New value"), "10");
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Unit" }), "MiB/s");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const patch = requestsOf(fetchSpy).find((request) => request.method === "PATCH")!;
    expect(await patch.json()).toEqual({ configs: { "leader.replication.throttled.rate": "10485760" } });
  });

  it("explains a broker the cluster does not have", async () => {
    stubBroker(json(400, { error: { code: "unknown_broker", message: "The cluster has no broker 0.", details: {} } }));
    renderApp("/clusters/3/brokers/0");
    expect(await screen.findByText("The cluster has no broker 0.")).toBeInTheDocument();
  });
});
