import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, signedIn, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { bodyCellTexts } from "../test/tables";
import { auditEvent, membership, page, payments, query, signedInHandlers } from "../test/tenancyFixtures";

function auditRequests(spy: ReturnType<typeof stubFetch>): URLSearchParams[] {
  return requestsOf(spy)
    .filter((request) => new URL(request.url).pathname === "/api/v1/audit-events/")
    .map(query);
}

function stubAudit(events: ReturnType<typeof page> | ((request: Request) => ReturnType<typeof page>)) {
  return stubFetch({
    "GET /api/v1/auth/session/": json(200, signedIn),
    "GET /api/v1/org-memberships/": page([]),
    "GET /api/v1/memberships/": page([]),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/audit-events/": events,
  });
}

describe("AuditLogPage", () => {
  it("sends the filters from the URL and puts applied filters back into it", async () => {
    const fetchSpy = stubAudit(page([auditEvent()]));
    const { router, user } = renderApp("/audit?actor=ada&team=1");

    const table = await screen.findByRole("table", { name: "Audit events" });
    expect(within(table).getByText("membership.update")).toBeInTheDocument();
    const first = auditRequests(fetchSpy)[0]!;
    expect(first.get("actor")).toBe("ada");
    expect(first.get("team")).toBe("1");
    expect(first.get("limit")).toBe("50");
    expect(screen.getByLabelText("Actor")).toHaveValue("ada");

    await user.type(screen.getByLabelText("Action"), "api_key.create");
    await user.type(screen.getByLabelText("From"), "2026-01-05T09:30");
    await user.click(screen.getByRole("button", { name: "Apply filters" }));

    await waitFor(() => expect(auditRequests(fetchSpy)).toHaveLength(2));
    const params = new URLSearchParams(router.state.location.search);
    expect(params.get("action")).toBe("api_key.create");
    expect(params.get("actor")).toBe("ada");
    expect(params.get("since")).toBe(new Date("2026-01-05T09:30").toISOString());
    expect(auditRequests(fetchSpy)[1]!.get("since")).toBe(params.get("since"));
  });

  it("pages on the server with limit and offset", async () => {
    const fetchSpy = stubAudit((request) => {
      const offset = Number(query(request).get("offset") ?? 0);
      return page([auditEvent({ id: offset + 1, action: `action.at-${offset}` })], 120);
    });
    const { router, user } = renderApp("/audit");

    expect(await screen.findByText("1–50 of 120")).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Next" }));
    expect(await screen.findByText("action.at-50")).toBeInTheDocument();
    expect(screen.getByText("51–100 of 120")).toBeInTheDocument();
    expect(router.state.location.search).toBe("?offset=50");
    expect(auditRequests(fetchSpy).at(-1)!.get("offset")).toBe("50");

    await user.click(screen.getByRole("button", { name: "Next" }));
    expect(await screen.findByText("101–120 of 120")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Next" })).toBeDisabled();
  });

  it("opens an event in a drawer with a readable before/after diff", async () => {
    stubAudit(page([auditEvent()]));
    const { user } = renderApp("/audit");

    await user.click(await screen.findByRole("button", { name: /Details of membership.update/ }));
    const drawer = screen.getByRole("dialog", { name: "membership.update · bo" });
    expect(bodyCellTexts(within(drawer).getByRole("table", { name: "Changes" }))).toEqual([
      ["role changed", '"viewer"', '"developer"'],
      ["user", '"bo"', '"bo"'],
    ]);
    expect(drawer).toHaveTextContent("ada (user, via session)");

    await user.keyboard("{Escape}");
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
  });

  it("shows the empty and error states", async () => {
    stubAudit((request) =>
      query(request).get("actor") === "broken"
        ? json(500, { error: { code: "error", message: "The request failed.", details: {} } })
        : page([]),
    );
    const { user } = renderApp("/audit");

    expect(await screen.findByText("No events match")).toBeInTheDocument();
    await user.type(screen.getByLabelText("Actor"), "broken");
    await user.click(screen.getByRole("button", { name: "Apply filters" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the audit log");
  });

  it("tells a person who administers nothing that the log is for admins, without asking for it", async () => {
    const fetchSpy = stubFetch({
      ...signedInHandlers({ teamRoles: [membership(9, 1, "me", "developer")] }),
    });
    renderApp("/audit");

    expect(await screen.findByText("The audit log is for admins")).toBeInTheDocument();
    expect(auditRequests(fetchSpy)).toHaveLength(0);
  });
});
