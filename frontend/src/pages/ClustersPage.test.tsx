import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { acme, cluster, logLine, operation } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { page, signedInHandlers } from "../test/tenancyFixtures";
import { brokersOf } from "./ClustersPage";

function stubClusters(options: { orgAdmin: boolean }, extra: Parameters<typeof stubFetch>[0] = {}) {
  return stubFetch({
    ...signedInHandlers({ orgAdminOf: options.orgAdmin ? [10] : [] }),
    "GET /api/v1/organizations/": page([acme]),
    "GET /api/v1/clusters/engines/": json(200, [
      { engine: "streamhub", label: "StreamHub broker", versions: [], default_version: "" },
      { engine: "apache-kafka", label: "Apache Kafka", versions: ["4.1.1", "4.2.0"], default_version: "4.2.0" },
    ]),
    "GET /api/v1/clusters/": page([
      cluster(),
      cluster({ id: 4, name: "legacy", provider: "external", status: "degraded", health: { reachable: false } }),
    ]),
    ...extra,
  });
}

const invalid = (details: Record<string, unknown>, code = "invalid", message = "The request is not valid.") =>
  json(400, { error: { code, message, details } });

describe("ClustersPage", () => {
  it("lists clusters with their status and health", async () => {
    stubClusters({ orgAdmin: false });
    renderApp("/clusters");

    const table = await screen.findByRole("table", { name: "Clusters" });
    const rows = within(table).getAllByRole("row");
    expect(within(rows[2]!).getByRole("link", { name: "legacy" })).toHaveAttribute("href", "/clusters/4");
    expect(rows[2]).toHaveTextContent("degraded");
    expect(rows[2]).toHaveTextContent("unreachable");
    expect(rows[1]).toHaveTextContent("running");
    expect(rows[1]).toHaveTextContent("healthy · 1 broker up");
  });

  it("shows a replicated cluster with under-replicated partitions as degraded with the count", async () => {
    stubClusters(
      { orgAdmin: false },
      {
        "GET /api/v1/clusters/": page([
          cluster({
            broker_count: 3,
            status: "degraded",
            health: { reachable: true, brokers_up: 3, brokers_expected: 3, under_replicated_partitions: 5 },
          }),
        ]),
      },
    );
    renderApp("/clusters");

    const row = within(await screen.findByRole("table", { name: "Clusters" })).getAllByRole("row")[1]!;
    expect(row).toHaveTextContent("degraded");
    expect(row).toHaveTextContent("5 under-replicated partitions");
    expect(row).toHaveTextContent("3");
  });

  it("offers create and register to org admins only", async () => {
    stubClusters({ orgAdmin: false });
    renderApp("/clusters");
    await screen.findByRole("table", { name: "Clusters" });
    await waitFor(() => expect(screen.queryByRole("button", { name: "Create cluster" })).not.toBeInTheDocument());
    expect(screen.queryByRole("button", { name: "Register existing cluster" })).not.toBeInTheDocument();
  });

  it("shows the empty and error states", async () => {
    stubClusters({ orgAdmin: true }, { "GET /api/v1/clusters/": page([]) });
    renderApp("/clusters");
    expect(await screen.findByText("No clusters yet")).toBeInTheDocument();
    expect(await screen.findByRole("button", { name: "Create cluster" })).toBeInTheDocument();
  });

  it("shows an error when the clusters cannot be loaded", async () => {
    stubClusters(
      { orgAdmin: true },
      { "GET /api/v1/clusters/": json(503, { error: { code: "unavailable", message: "Try later.", details: {} } }) },
    );
    renderApp("/clusters");
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the clusters");
    expect(screen.getByRole("alert")).toHaveTextContent("Try later.");
  });

  it("creates a cluster: server errors land on their fields and rows, then the progress is polled to the end", async () => {
    let attempts = 0;
    let polls = 0;
    const fetchSpy = stubClusters(
      { orgAdmin: true },
      {
        "POST /api/v1/clusters/": () => {
          attempts += 1;
          if (attempts === 1) return invalid({ name: ["A cluster named 'orders' already exists."] });
          if (attempts === 2) {
            return invalid(
              { problems: ["bogus.setting is not a known Kafka broker config."] },
              "invalid_broker_config",
              "The broker config is not valid.",
            );
          }
          return json(202, {
            operation: operation(),
            operation_url: "http://localhost/api/v1/operations/50/",
            cluster: cluster({ status: "requested" }),
          });
        },
        "GET /api/v1/operations/50/": () => {
          polls += 1;
          if (polls === 1) {
            return json(
              200,
              operation({
                state: "running",
                step: 3,
                step_name: "start brokers",
                log: [logLine("allocated port 19092"), logLine("started broker 0 (pid 4242)")],
              }),
            );
          }
          return json(
            200,
            operation({
              state: "succeeded",
              step: 5,
              step_name: "verify",
              log: [logLine("allocated port 19092"), logLine("cluster answers Metadata")],
            }),
          );
        },
      },
    );
    const { user } = renderApp("/clusters");

    await user.click(await screen.findByRole("button", { name: "Create cluster" }));
    const dialog = screen.getByRole("dialog", { name: "Create cluster" });
    const name = within(dialog).getByLabelText("Name");
    await user.type(name, "Orders!");
    await user.click(within(dialog).getByRole("button", { name: "Create cluster" }));
    expect(name).toHaveAccessibleDescription(/1 to 63 lowercase letters/);
    expect(attempts).toBe(0);

    await user.clear(name);
    await user.type(name, "orders");
    await user.click(within(dialog).getByRole("button", { name: "Add override" }));
    await user.type(within(dialog).getByLabelText("Property 1"), "bogus.setting");
    await user.type(within(dialog).getByLabelText("Value 1"), "1");
    await user.click(within(dialog).getByRole("button", { name: "Create cluster" }));
    await waitFor(() => expect(name).toHaveAccessibleDescription(/already exists/));

    await user.click(within(dialog).getByRole("button", { name: "Create cluster" }));
    await waitFor(() =>
      expect(within(dialog).getByLabelText("Property 1")).toHaveAccessibleDescription(
        "bogus.setting is not a known Kafka broker config.",
      ),
    );

    await user.clear(within(dialog).getByLabelText("Property 1"));
    await user.type(within(dialog).getByLabelText("Property 1"), "num.partitions");
    await user.clear(within(dialog).getByLabelText("Value 1"));
    await user.type(within(dialog).getByLabelText("Value 1"), "3");
    await user.click(within(dialog).getByRole("button", { name: "Create cluster" }));

    const running = await within(dialog).findByRole("progressbar", { name: "Step 3 of 5: start brokers" });
    expect(running).toHaveAttribute("aria-valuenow", "50");
    expect(within(dialog).getByRole("list", { name: "Log" })).toHaveTextContent("started broker 0 (pid 4242)");
    const done = await within(dialog).findByRole(
      "progressbar",
      { name: "Done: all 5 steps finished" },
      { timeout: 3000 },
    );
    expect(done).toHaveAttribute("aria-valuenow", "100");
    expect(within(dialog).getByRole("button", { name: "Done" })).toBeInTheDocument();

    // Polling stops once the operation has finished.
    const pollsAtEnd = polls;
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(polls).toBe(pollsAtEnd);
    const posted = requestsOf(fetchSpy).filter((request) => request.method === "POST");
    expect(await posted[2]!.json()).toEqual({
      organization: 10,
      name: "orders",
      broker_count: 3,
      broker_config: { "num.partitions": "3" },
      port: 0,
      engine: "streamhub",
      engine_version: "",
    });
  });

  it("creates an Apache Kafka cluster of an installed version", async () => {
    const fetchSpy = stubClusters(
      { orgAdmin: true },
      {
        "POST /api/v1/clusters/": json(202, {
          operation: operation(),
          operation_url: "http://localhost/api/v1/operations/50/",
          cluster: cluster({ status: "requested", engine: "apache-kafka", engine_version: "4.1.1" }),
        }),
        "GET /api/v1/operations/50/": json(200, operation({ state: "running", step: 1 })),
      },
    );
    const { user } = renderApp("/clusters");
    await user.click(await screen.findByRole("button", { name: "Create cluster" }));
    const dialog = screen.getByRole("dialog", { name: "Create cluster" });
    await user.type(within(dialog).getByLabelText("Name"), "jvm");
    await user.selectOptions(within(dialog).getByLabelText("Engine"), "apache-kafka");
    const version = within(dialog).getByLabelText("Apache Kafka version");
    expect(version).toHaveValue("4.2.0");
    expect(within(version).getByRole("option", { name: "4.2.0 (pinned)" })).toBeInTheDocument();
    await user.selectOptions(version, "4.1.1");
    await user.click(within(dialog).getByRole("button", { name: "Create cluster" }));
    await within(dialog).findByText(/was requested/);
    const posted = requestsOf(fetchSpy).filter((request) => request.method === "POST");
    expect(await posted.at(-1)!.json()).toMatchObject({ name: "jvm", engine: "apache-kafka", engine_version: "4.1.1" });
  });

  it("shows where a failed provisioning stopped and why", async () => {
    stubClusters(
      { orgAdmin: true },
      {
        "POST /api/v1/clusters/": json(202, {
          operation: operation(),
          operation_url: "http://localhost/api/v1/operations/50/",
          cluster: cluster({ status: "requested" }),
        }),
        "GET /api/v1/operations/50/": json(
          200,
          operation({
            state: "failed",
            step: 3,
            step_name: "start brokers",
            error: "Broker 0 exited with status 1: port 19092 is in use",
            log: [logLine("starting broker 0")],
          }),
        ),
      },
    );
    const { user } = renderApp("/clusters");

    await user.click(await screen.findByRole("button", { name: "Create cluster" }));
    const dialog = screen.getByRole("dialog", { name: "Create cluster" });
    await user.type(within(dialog).getByLabelText("Name"), "orders");
    await user.click(within(dialog).getByRole("button", { name: "Create cluster" }));

    expect(
      await within(dialog).findByRole("progressbar", { name: "Failed at step 3 of 5: start brokers" }),
    ).toBeInTheDocument();
    expect(within(dialog).getByRole("alert")).toHaveTextContent("port 19092 is in use");
    expect(within(dialog).getByRole("list", { name: "Log" })).toHaveTextContent("starting broker 0");
  });

  it("registers an existing cluster and shows clearly when it cannot be reached", async () => {
    let attempts = 0;
    const fetchSpy = stubClusters(
      { orgAdmin: true },
      {
        "POST /api/v1/clusters/register/": () => {
          attempts += 1;
          return attempts === 1
            ? invalid(
                { kafka_error: "NetworkException", message: "Connection refused" },
                "cluster_unreachable",
                "The cluster at 10.0.0.9:9092 did not answer Metadata.",
              )
            : json(201, cluster({ id: 9, name: "legacy-2", provider: "external" }));
        },
        "GET /api/v1/clusters/9/": json(200, {
          ...cluster({ id: 9, name: "legacy-2", provider: "external" }),
          brokers: [],
          configs_error: "",
        }),
        "GET /api/v1/operations/": page([]),
      },
    );
    const { user, router } = renderApp("/clusters");

    await user.click(await screen.findByRole("button", { name: "Register existing cluster" }));
    const dialog = screen.getByRole("dialog", { name: "Register existing cluster" });
    await user.type(within(dialog).getByLabelText("Name"), "legacy-2");
    await user.type(within(dialog).getByLabelText("Bootstrap servers"), "10.0.0.9:9092");
    await user.selectOptions(within(dialog).getByLabelText("Security protocol"), "SASL_SSL");
    await user.selectOptions(within(dialog).getByLabelText("SASL mechanism"), "SCRAM-SHA-512");
    await user.type(within(dialog).getByLabelText("Username"), "admin");
    await user.type(within(dialog).getByLabelText("Password"), "s3cret");
    await user.click(within(dialog).getByRole("button", { name: "Register cluster" }));

    const problem = await within(dialog).findByRole("alert");
    expect(problem).toHaveTextContent("Cluster unreachable.");
    expect(problem).toHaveTextContent("The cluster at 10.0.0.9:9092 did not answer Metadata.");
    expect(problem).toHaveTextContent("NetworkException: Connection refused");

    await user.click(within(dialog).getByRole("button", { name: "Register cluster" }));
    expect(await screen.findByRole("heading", { level: 1, name: "legacy-2" })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/clusters/9");
    const posted = requestsOf(fetchSpy).filter((request) => request.method === "POST");
    expect(await posted[0]!.json()).toEqual({
      organization: 10,
      name: "legacy-2",
      bootstrap_servers: "10.0.0.9:9092",
      security_protocol: "SASL_SSL",
      sasl_mechanism: "SCRAM-SHA-512",
      username: "admin",
      password: "s3cret",
    });
  });
});

describe("brokersOf", () => {
  it("shows brokers up of expected, and none for a deleted cluster", () => {
    expect(brokersOf(cluster({ broker_count: 3, health: { brokers_up: 2, brokers_expected: 3 } }))).toBe("2 of 3 up");
    expect(brokersOf(cluster({ broker_count: 3, status: "deleted" }))).toBe("none (deleted)");
    expect(brokersOf(cluster({ broker_count: 3, health: {} }))).toBe("3");
  });
});
