import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, stubFetch } from "../test/fetchStub";
import { bodyCellTexts } from "../test/tables";
import { membership, page, payments, signedInHandlers } from "../test/tenancyFixtures";
import { renderPage } from "../test/renderPage";
import { jobRun, keySkewResult } from "./jobs/jobFixtures";
import { JobRunPage } from "./JobRunPage";

type Handlers = Parameters<typeof stubFetch>[0];

function stubRun(role: "developer" | "viewer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(1, payments.id, "me", role)] }),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/job-runs/12/": json(200, jobRun()),
    "GET /api/v1/job-runs/12/log/": json(200, { lines: ["INFO starting", "INFO stage 1 done"] }),
    ...extra,
  });
}

const renderRun = () => renderPage(<JobRunPage />, "/jobs/:id", "/jobs/12");

describe("JobRunPage", () => {
  it("shows a queued run waiting for a worker", async () => {
    stubRun("viewer", {
      "GET /api/v1/job-runs/12/": json(
        200,
        jobRun({
          state: "queued",
          started_at: null,
          duration_seconds: null,
          progress_fraction: 0,
          progress: { stages_done: 0, stages_total: 0, tasks_done: 0, tasks_total: 0, records_read: 0 },
        }),
      ),
      "GET /api/v1/job-runs/12/log/": json(200, { lines: [] }),
    });
    renderRun();
    const bar = await screen.findByRole("progressbar");
    expect(bar).toHaveAttribute("aria-valuetext", "Queued: waiting for a Spark worker");
    expect(await screen.findByText("Nothing logged yet.")).toBeInTheDocument();
  });

  it("polls a running run and moves its progress bar until it succeeds, then shows the results", async () => {
    let polls = 0;
    stubRun("viewer", {
      "GET /api/v1/job-runs/12/": () => {
        polls += 1;
        if (polls === 1) return json(200, jobRun());
        return json(
          200,
          jobRun({
            state: "succeeded",
            progress_fraction: 1,
            // Spark counted the input twice (two stages read it); the job's own count is what it read.
            progress: { stages_done: 3, stages_total: 3, tasks_done: 8, tasks_total: 8, records_read: 2000 },
            finished_at: "2026-01-05T10:00:05Z",
            result: keySkewResult,
          }),
        );
      },
    });
    renderRun();

    const bar = await screen.findByRole("progressbar");
    expect(bar).toHaveAttribute("aria-valuenow", "75");
    expect(bar).toHaveAttribute("aria-valuetext", "75% · stages 1 of 3 · tasks 6 of 8 · 12,000 records read");
    expect(screen.getByText("Results appear when the run succeeds.")).toBeInTheDocument();
    expect(await screen.findByText(/INFO stage 1 done/)).toBeInTheDocument();

    await waitFor(() => expect(screen.getByRole("progressbar")).toHaveAttribute("aria-valuenow", "100"), {
      timeout: 5000,
    });
    expect(screen.getByRole("progressbar")).toHaveAttribute("aria-valuetext", "Done · 1,000 records read");
    expect(bodyCellTexts(screen.getByRole("table", { name: "Top keys" }))).toEqual([
      ["user-1", "700"],
      ["user-2", "300"],
    ]);
    const bars = screen.getByRole("list", { name: "Records per partition: records by partition" });
    expect(
      within(bars)
        .getAllByRole("listitem")
        .map((item) => item.textContent),
    ).toEqual(["0800", "1200"]);
    expect(screen.getByRole("link", { name: "parquet/part-0.parquet" })).toHaveAttribute(
      "href",
      "/api/v1/job-runs/12/download/?path=parquet%2Fpart-0.parquet",
    );
    expect(screen.getByText(/"skewed": true/)).toBeInTheDocument();
    expect(within(screen.getByLabelText("Metrics")).getByText("250.5")).toBeInTheDocument();
  }, 30_000);

  it("shows why a run failed", async () => {
    stubRun("developer", {
      "GET /api/v1/job-runs/12/": json(
        200,
        jobRun({ state: "failed", reason: "Unknown topic payments.gone.", finished_at: "2026-01-05T10:00:03Z" }),
      ),
    });
    renderRun();
    expect(await screen.findByText("Unknown topic payments.gone.")).toBeInTheDocument();
    expect(screen.getByRole("progressbar")).toHaveAttribute("aria-valuetext", expect.stringMatching(/^Failed/));
    expect(screen.queryByRole("button", { name: "Cancel run" })).not.toBeInTheDocument();
  });

  it("cancels a running run after confirmation, for developers only", async () => {
    let cancelled = false;
    stubRun("developer", {
      "GET /api/v1/job-runs/12/": () => json(200, jobRun(cancelled ? { state: "cancelled" } : {})),
      "POST /api/v1/job-runs/12/cancel/": () => {
        cancelled = true;
        return json(202, jobRun({ cancel_requested: true }));
      },
    });
    const { user } = renderRun();
    await user.click(await screen.findByRole("button", { name: "Cancel run" }));
    const dialog = screen.getByRole("alertdialog", { name: "Cancel key_skew #12" });
    await user.type(within(dialog).getByRole("textbox"), "key_skew");
    await user.click(within(dialog).getByRole("button", { name: "Cancel run" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    expect(cancelled).toBe(true);
    await waitFor(
      () =>
        expect(screen.getByRole("progressbar")).toHaveAttribute("aria-valuetext", expect.stringMatching(/^Cancelled/)),
      {
        timeout: 5000,
      },
    );
  }, 30_000);

  it("offers no cancel to viewers", async () => {
    stubRun("viewer");
    renderRun();
    await screen.findByRole("progressbar");
    expect(screen.queryByRole("button", { name: "Cancel run" })).not.toBeInTheDocument();
  });
});
