import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { cluster } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { bodyCellTexts } from "../test/tables";
import { billingAccount, membership, page, payments, query, signedInHandlers } from "../test/tenancyFixtures";
import { renderPage } from "../test/renderPage";
import { exportEntry, jobRun, keySkewEntry, streamingJob, streamTopicSqlEntry } from "./jobs/jobFixtures";
import { JobsPage } from "./JobsPage";

type Handlers = Parameters<typeof stubFetch>[0];

function stubJobs(role: "developer" | "viewer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(1, payments.id, "me", role)] }),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/clusters/": page([cluster()]),
    "GET /api/v1/service-accounts/": page([billingAccount]),
    "GET /api/v1/job-runs/catalog/": json(200, [keySkewEntry, exportEntry]),
    "GET /api/v1/streaming-jobs/": page([]),
    "GET /api/v1/streaming-jobs/catalog/": json(200, [streamTopicSqlEntry]),
    "GET /api/v1/job-runs/": page([
      jobRun(),
      jobRun({
        id: 11,
        state: "succeeded",
        progress_fraction: 1,
        duration_seconds: 90,
        result: { tables: [], charts: [], documents: [], files: [], metrics: { records_per_second: 2500 } },
      }),
    ]),
    ...extra,
  });
}

const renderJobs = (path = "/jobs") => renderPage(<JobsPage />, "/jobs", path);

describe("JobsPage", () => {
  it("lists runs with their state, live progress, duration and rate", async () => {
    stubJobs("viewer");
    renderJobs();
    const table = await screen.findByRole("table", { name: "Job runs" });
    const cells = bodyCellTexts(table);
    expect(cells[0]?.slice(0, 4)).toEqual(["key_skew #12", "Payments", "orders", "running"]);
    expect(cells[0]?.slice(6)).toEqual(["4 s", "3K"]);
    expect(cells[1]?.slice(6)).toEqual(["1.5 min", "2.5K"]);
    expect(within(table).getAllByRole("progressbar")).toHaveLength(1);
    expect(within(table).getByRole("link", { name: "key_skew #12" })).toHaveAttribute("href", "/jobs/12");
  });

  it("lets viewers read the catalog but not launch", async () => {
    stubJobs("viewer");
    renderJobs();
    expect(await screen.findByText(/Developers of a team can launch jobs/)).toBeInTheDocument();
    expect(screen.getByText(/Key cardinality and skew/)).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Launch key_skew" })).not.toBeInTheDocument();
  });

  it("launches a job from a form built from its typed parameters", async () => {
    const fetchSpy = stubJobs("developer", {
      "POST /api/v1/job-runs/": json(201, jobRun({ id: 13, state: "queued" })),
    });
    const { user, router } = renderJobs();
    await user.click(await screen.findByRole("button", { name: "Launch key_skew" }));
    const form = screen.getByRole("form", { name: "Launch a job" });

    await user.click(within(form).getByRole("button", { name: "Launch" }));
    expect(within(form).getByLabelText("Topic (required)")).toHaveAccessibleDescription("Topic is required.");
    expect(within(form).getByLabelText("Cluster")).toHaveAccessibleDescription("Pick a cluster.");

    await user.type(within(form).getByLabelText("Topic (required)"), "payments.orders");
    await user.type(within(form).getByLabelText("Top"), "3");
    await user.selectOptions(within(form).getByLabelText("Fail on data loss"), "false");
    await user.selectOptions(within(form).getByLabelText("Cluster"), "3");
    await user.selectOptions(within(form).getByLabelText("Service account"), "20");
    await user.type(within(form).getByLabelText("Service account password"), "s3cret");
    await user.click(within(form).getByRole("button", { name: "Launch" }));

    await waitFor(() => expect(router.state.location.pathname).toBe("/jobs/13"));
    const launch = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await launch.json()).toEqual({
      job: "key_skew",
      team: 1,
      cluster: 3,
      service_account: 20,
      password: "s3cret",
      time_limit_seconds: 1800,
      parameters: { source: { topic: "payments.orders", fail_on_data_loss: false }, top: 3 },
    });
  }, 30_000);

  it("shows the API's refusal of the parameters", async () => {
    stubJobs("developer", {
      "POST /api/v1/job-runs/": json(400, {
        error: { code: "invalid_parameters", message: "Invalid parameters for key_skew: unknown topic.", details: {} },
      }),
    });
    const { user } = renderJobs();
    await user.click(await screen.findByRole("button", { name: "Launch key_skew" }));
    const form = screen.getByRole("form", { name: "Launch a job" });
    await user.type(within(form).getByLabelText("Topic (required)"), "nope");
    await user.selectOptions(within(form).getByLabelText("Cluster"), "3");
    await user.click(within(form).getByRole("button", { name: "Launch" }));
    expect(await within(form).findByRole("alert")).toHaveTextContent("Invalid parameters for key_skew");
  }, 30_000);

  it("filters runs through the URL", async () => {
    const fetchSpy = stubJobs("viewer");
    const { user, router } = renderJobs("/jobs?state=failed");
    await screen.findByRole("table", { name: "Job runs" });
    expect(query(requestsOf(fetchSpy).find((request) => request.url.includes("/job-runs/?"))!).get("state")).toBe(
      "failed",
    );
    await user.selectOptions(screen.getByLabelText("Job"), "export_parquet");
    expect(Object.fromEntries(new URLSearchParams(router.state.location.search))).toEqual({
      state: "failed",
      job: "export_parquet",
    });
  });

  it("lists streaming jobs with their state, rate, lag and restarts, linking to each", async () => {
    stubJobs("viewer", { "GET /api/v1/streaming-jobs/": page([streamingJob()]) });
    renderJobs();
    const table = await screen.findByRole("table", { name: "Streaming jobs" });
    expect(bodyCellTexts(table)).toEqual([
      ["orders-filter", "stream_topic_sql", "Payments", "running", "240.2", "1250", "1"],
    ]);
    expect(within(table).getByRole("link", { name: "orders-filter" })).toHaveAttribute("href", "/jobs/streams/4");
  });

  it("creates a streaming job from its form: a name, its source, SQL and target", async () => {
    const fetchSpy = stubJobs("developer", {
      "POST /api/v1/streaming-jobs/": json(201, streamingJob({ id: 7, name: "orders-kept" })),
    });
    const { user, router } = renderJobs();
    await user.click(await screen.findByRole("button", { name: "New streaming job…" }));
    const form = screen.getByRole("form", { name: "Create a streaming job" });

    await user.click(within(form).getByRole("button", { name: "Create and start" }));
    expect(within(form).getByLabelText("Name")).toHaveAccessibleDescription(/Name the streaming job\./);
    expect(within(form).getByLabelText("Target topic (required)")).toHaveAccessibleDescription(
      "Target topic is required.",
    );

    await user.type(within(form).getByLabelText("Name"), "orders-kept");
    await user.selectOptions(within(form).getByLabelText("Cluster"), "3");
    await user.type(within(form).getByLabelText("Source topic (required)"), "payments.orders");
    await user.type(within(form).getByLabelText("Max records per batch"), "500");
    await user.type(within(form).getByLabelText("Target topic (required)"), "payments.kept");
    const sql = within(form).getByLabelText("SQL");
    expect(sql.tagName).toBe("TEXTAREA");
    await user.type(sql, "SELECT key, value FROM source WHERE key IS NOT NULL");
    await user.click(within(form).getByRole("button", { name: "Create and start" }));

    await waitFor(() => expect(router.state.location.pathname).toBe("/jobs/streams/7"));
    const create = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await create.json()).toEqual({
      name: "orders-kept",
      job: "stream_topic_sql",
      team: 1,
      cluster: 3,
      service_account: null,
      password: "",
      parameters: {
        source: { topic: "payments.orders", max_offsets_per_trigger: 500 },
        target_topic: "payments.kept",
        sql: "SELECT key, value FROM source WHERE key IS NOT NULL",
      },
    });
  }, 30_000);

  it("shows empty and error states", async () => {
    stubJobs("viewer", {
      "GET /api/v1/job-runs/": page([]),
      "GET /api/v1/job-runs/catalog/": json(500, { error: { code: "server_error", message: "Boom.", details: {} } }),
    });
    renderJobs();
    expect(await screen.findByText("No runs yet")).toBeInTheDocument();
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the job catalog");
  });
});
