import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, signedIn, stubFetch, type StubbedResponse } from "../../test/fetchStub";
import { renderApp } from "../../test/renderApp";
import { acme } from "../../test/clusterFixtures";
import { page, payments } from "../../test/tenancyFixtures";

const risk = { ...payments, id: 9, name: "Risk", slug: "risk", description: "" };

function api(extra: Parameters<typeof stubFetch>[0] = {}) {
  return stubFetch(
    {
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/organizations/": page([acme]),
      "GET /api/v1/org-memberships/": page([]),
      "GET /api/v1/memberships/": page([]),
      "GET /api/v1/teams/": page([]),
      "GET /api/v1/prefixes/": page([]),
      "POST /api/v1/teams/": json(201, risk),
      "GET /api/v1/teams/9/": json(200, risk),
      ...extra,
    },
    page([]),
  );
}

describe("Creating a team", () => {
  it("creates the team with a prefix for its topics and groups and opens its page", async () => {
    const bodies: unknown[] = [];
    const record = (answer: (body: Record<string, unknown>) => StubbedResponse) => async (request: Request) => {
      const body = (await request.json()) as Record<string, unknown>;
      bodies.push(body);
      return answer(body);
    };
    api({
      "POST /api/v1/teams/": record(() => json(201, risk)),
      "POST /api/v1/prefixes/": record((body) =>
        json(201, { id: 1, organization: 10, created_at: "2026-01-02T10:00:00Z", ...body }),
      ),
    });
    const { user } = renderApp("/teams");

    await user.click(await screen.findByRole("button", { name: "Create team" }));
    const dialog = screen.getByRole("dialog", { name: "Create team" });
    await user.type(within(dialog).getByLabelText("Name"), "Risk");
    await user.type(within(dialog).getByLabelText("Name prefix"), "risk.");
    await user.click(within(dialog).getByRole("button", { name: "Create team" }));

    expect(await screen.findByRole("heading", { name: "Risk", level: 1 })).toBeInTheDocument();
    expect(bodies).toEqual([
      { organization: 10, name: "Risk", slug: "", description: "" },
      { team: 9, resource_type: "topic", prefix: "risk." },
      { team: 9, resource_type: "group", prefix: "risk." },
    ]);
  });

  it("says on the team's page when the prefix was refused", async () => {
    api({
      "POST /api/v1/prefixes/": json(409, {
        error: { code: "prefix_overlap", message: "'pay' overlaps 'payments.', owned by team Payments.", details: {} },
      }),
    });
    const { user } = renderApp("/teams");

    await user.click(await screen.findByRole("button", { name: "Create team" }));
    const dialog = screen.getByRole("dialog", { name: "Create team" });
    await user.type(within(dialog).getByLabelText("Name"), "Risk");
    await user.type(within(dialog).getByLabelText("Name prefix"), "pay");
    await user.click(within(dialog).getByRole("button", { name: "Create team" }));

    expect(await screen.findByRole("heading", { name: "Risk", level: 1 })).toBeInTheDocument();
    expect(screen.getByText(/its prefix was refused: 'pay' overlaps 'payments.'/)).toBeInTheDocument();
  });

  it("is not offered to people who administer no organization", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, { ...signedIn, user: { ...signedIn.user!, is_superuser: false } }),
      "GET /api/v1/organizations/": page([acme]),
      "GET /api/v1/org-memberships/": page([]),
      "GET /api/v1/memberships/": page([]),
      "GET /api/v1/teams/": page([payments]),
      "GET /api/v1/prefixes/": page([]),
    });
    renderApp("/teams");

    await screen.findByRole("table", { name: "Teams" });
    expect(screen.queryByRole("button", { name: "Create team" })).not.toBeInTheDocument();
  });
});
