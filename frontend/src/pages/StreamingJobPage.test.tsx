import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, stubFetch } from "../test/fetchStub";
import { bodyCellTexts } from "../test/tables";
import { membership, page, payments, signedInHandlers } from "../test/tenancyFixtures";
import { renderPage } from "../test/renderPage";
import { streamingJob } from "./jobs/jobFixtures";
import { StreamingJobPage } from "./StreamingJobPage";

type Handlers = Parameters<typeof stubFetch>[0];

function stubStream(role: "developer" | "viewer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(1, payments.id, "me", role)] }),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/streaming-jobs/4/": json(200, streamingJob()),
    "GET /api/v1/streaming-jobs/4/log/": json(200, { lines: ["streamhub: batch 40 replayed"] }),
    ...extra,
  });
}

const renderStream = () => renderPage(<StreamingJobPage />, "/jobs/streams/:id", "/jobs/streams/4");

describe("StreamingJobPage", () => {
  it("shows the stream's progress, restarts and its consumer lag per partition", async () => {
    stubStream("viewer");
    renderStream();
    expect(await screen.findByRole("heading", { name: "orders-filter" })).toBeInTheDocument();
    expect(screen.getByRole("heading", { name: "Consumer lag · 1,250 records" })).toBeInTheDocument();
    expect(bodyCellTexts(screen.getByRole("table", { name: "Lag by partition" }))).toEqual([
      ["payments.orders", "0", "5,000", "6,000", "1,000"],
      ["payments.orders", "1", "4,750", "5,000", "250"],
    ]);
    const progress = screen.getByLabelText("Progress");
    expect(progress).toHaveTextContent("Batch41");
    expect(progress).toHaveTextContent(/Restarts1 · last .+: spark-submit exited with status 137/);
    expect(progress).toHaveTextContent("Batch duration480 ms");
    expect(progress).toHaveTextContent("Topic sinkexactly-once (one transaction per batch) · last committed batch 41");
    expect(screen.getByRole("link", { name: "spark-stream-4" })).toHaveAttribute(
      "href",
      `/groups?name=spark-stream-4&cluster=${streamingJob().cluster}`,
    );
    expect(await screen.findByText(/batch 40 replayed/)).toBeInTheDocument();
    // Viewers follow a stream; they cannot stop it.
    expect(screen.queryByRole("button", { name: "Stop" })).not.toBeInTheDocument();
  });

  it("shows the job's own log lines, and the driver's whole log when asked", async () => {
    stubStream("viewer", {
      "GET /api/v1/streaming-jobs/4/log/": (request: Request) =>
        json(200, {
          lines:
            new URL(request.url).searchParams.get("source") === "spark"
              ? ["26/12/04 18:57:36 WARN ResolveWriteToStream: adaptive disabled", "streamhub: batch 0: 20 rows read"]
              : ["2026-12-04T18:58:50Z streamhub: batch 0: 20 rows read"],
        }),
    });
    renderStream();
    expect(await screen.findByText(/2026-12-04T18:58:50Z streamhub: batch 0: 20 rows read/)).toBeInTheDocument();
    expect(screen.queryByText(/WARN ResolveWriteToStream/)).not.toBeInTheDocument();
    (await screen.findByRole("checkbox", { name: /driver's whole log/ })).click();
    expect(await screen.findByText(/WARN ResolveWriteToStream/)).toBeInTheDocument();
  });

  it("lets a developer stop a running stream and start it again, asking for the password a stop wiped", async () => {
    let state: "running" | "stopped" | "starting" = "running";
    const passwords: string[] = [];
    stubStream("developer", {
      "GET /api/v1/streaming-jobs/4/": () =>
        json(
          200,
          streamingJob(
            state === "running" ? {} : { desired_state: state === "stopped" ? "stopped" : "running", state },
          ),
        ),
      "POST /api/v1/streaming-jobs/4/stop/": () => {
        state = "stopped";
        return json(202, streamingJob({ desired_state: "stopped", state: "stopped" }));
      },
      "POST /api/v1/streaming-jobs/4/start/": async (request) => {
        const { password } = (await request.json()) as { password: string };
        passwords.push(password);
        if (!password) {
          return json(400, { error: { code: "credentials", message: "This cluster needs SASL.", details: {} } });
        }
        state = "starting";
        return json(202, streamingJob({ desired_state: "running", state: "starting" }));
      },
    });
    const { user } = renderStream();
    expect(screen.queryByRole("button", { name: "Start" })).not.toBeInTheDocument();
    await user.click(await screen.findByRole("button", { name: "Stop" }));
    expect(await screen.findByText("The figures of its last batch, before it stopped.")).toBeInTheDocument();
    await user.click(await screen.findByRole("button", { name: "Start" }));
    const form = await screen.findByRole("form", { name: "Start with the service account's password" });
    expect(screen.getByText("stopped", { selector: ".badge" })).toBeInTheDocument();
    await user.type(within(form).getByLabelText("Service account password"), "s3cret");
    await user.click(within(form).getByRole("button", { name: "Start" }));
    await waitFor(() => expect(screen.getByText("starting", { selector: ".badge" })).toBeInTheDocument());
    expect(passwords).toEqual(["", "s3cret"]);
    expect(screen.queryByRole("form", { name: "Start with the service account's password" })).not.toBeInTheDocument();
  });

  it("says when lag has not been measured yet", async () => {
    stubStream("viewer", {
      "GET /api/v1/streaming-jobs/4/": json(
        200,
        streamingJob({
          state: "starting",
          lag: { sampled_at: null, group: null, batch_id: null, total_lag: 0, partitions: [] },
        }),
      ),
    });
    renderStream();
    expect(await screen.findByText("Lag appears once the stream's supervisor has measured it.")).toBeInTheDocument();
  });
});
