import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, signedIn, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { bodyCellTexts } from "../test/tables";
import { membership, page, payments, paymentsPrefix, search } from "../test/tenancyFixtures";

describe("TeamsPage", () => {
  it("lists teams with their member counts and prefixes, linking to each team", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/teams/": page([payments, search]),
      "GET /api/v1/memberships/": page([membership(1, 1, "ada", "team_admin"), membership(2, 1, "bo", "viewer")]),
      "GET /api/v1/prefixes/": page([paymentsPrefix]),
    });
    renderApp("/teams");

    expect(screen.getByRole("status")).toBeInTheDocument();
    const table = await screen.findByRole("table", { name: "Teams" });
    expect(bodyCellTexts(table)).toEqual([
      ["Payments", "2", "topic:payments."],
      ["Search", "0", "—"],
    ]);
    expect(within(table).getByRole("link", { name: "Payments" })).toHaveAttribute("href", "/teams/1");
  });

  it("says so when there are no teams", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/teams/": page([]),
      "GET /api/v1/memberships/": page([]),
      "GET /api/v1/prefixes/": page([]),
    });
    renderApp("/teams");

    expect(await screen.findByText("No teams yet")).toBeInTheDocument();
  });

  it("shows the error and loads again on retry", async () => {
    let calls = 0;
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedIn),
      "GET /api/v1/teams/": () => {
        calls += 1;
        return calls === 1
          ? json(500, { error: { code: "error", message: "The request failed.", details: {} } })
          : page([payments]);
      },
      "GET /api/v1/memberships/": page([]),
      "GET /api/v1/prefixes/": page([]),
    });
    const { user } = renderApp("/teams");

    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the teams");
    await user.click(screen.getByRole("button", { name: "Try again" }));
    expect(await screen.findByRole("link", { name: "Payments" })).toBeInTheDocument();
  });
});
