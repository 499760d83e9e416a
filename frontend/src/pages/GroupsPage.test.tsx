import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { cluster } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { GroupsPage } from "./GroupsPage";
import { renderPage } from "../test/renderPage";
import { bodyCellTexts } from "../test/tables";
import { page, payments, query, signedInHandlers } from "../test/tenancyFixtures";
import { consumerGroup, groupLag } from "./groups/groupFixtures";

function stubGroups(groups: Parameters<typeof page>[0], extra: Parameters<typeof stubFetch>[0] = {}) {
  return stubFetch({
    ...signedInHandlers({}),
    "GET /api/v1/clusters/": page([cluster()]),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/consumer-groups/": page(groups),
    "GET /api/v1/lag/groups/": page([groupLag()]),
    ...extra,
  });
}

describe("GroupsPage", () => {
  it("lists groups with their cluster, team, state and lag, most lag first", async () => {
    const fetchSpy = stubGroups([
      consumerGroup(),
      consumerGroup({ id: 32, name: "payments.audit", state: "STABLE", member_count: 2, total_lag: 0, team: null }),
    ]);
    renderPage(<GroupsPage />, "/groups", "/groups");

    const table = await screen.findByRole("table", { name: "Consumer groups" });
    expect(within(table).getByRole("link", { name: "payments.billing" })).toHaveAttribute("href", "/groups/31");
    const cells = bodyCellTexts(table);
    expect(cells[0]?.slice(0, 7)).toEqual(["payments.billing", "Classic", "orders", "Payments", "empty", "0", "1,500"]);
    expect(cells[1]?.slice(0, 7)).toEqual(["payments.audit", "Classic", "orders", "—", "stable", "2", "0"]);
    // Health and time lag from the lag sampler, where it has seen the group.
    await waitFor(() => expect(bodyCellTexts(table)[0]?.slice(7, 9)).toEqual(["stalled", "2 min"]));
    expect(cells[1]?.slice(7, 9)).toEqual(["—", "—"]);
    const listRequest = requestsOf(fetchSpy).find((request) => request.url.includes("/consumer-groups/"));
    expect(query(listRequest!).get("ordering")).toBe("-total_lag");
  });

  it("names clusters and teams that arrive after the groups", async () => {
    const later = async <T,>(answer: T): Promise<T> => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return answer;
    };
    stubGroups([consumerGroup()], {
      "GET /api/v1/clusters/": () => later(page([cluster()])),
      "GET /api/v1/teams/": () => later(page([payments])),
    });
    renderPage(<GroupsPage />, "/groups", "/groups");
    const table = await screen.findByRole("table", { name: "Consumer groups" });
    await waitFor(() => expect(bodyCellTexts(table)[0]?.slice(2, 4)).toEqual(["orders", "Payments"]));
  });

  it("puts the filters in the URL and sends them to the API", async () => {
    const fetchSpy = stubGroups([consumerGroup()]);
    const { user, router } = renderPage(<GroupsPage />, "/groups", "/groups");
    await screen.findByRole("table", { name: "Consumer groups" });

    const filters = screen.getByRole("form", { name: "Filter consumer groups" });
    await user.selectOptions(within(filters).getByLabelText("Cluster"), "3");
    await user.selectOptions(within(filters).getByLabelText("Team"), "1");
    await user.selectOptions(within(filters).getByLabelText("State"), "STABLE");
    await user.selectOptions(within(filters).getByLabelText("Type"), "share");
    await user.type(within(filters).getByLabelText("Name contains"), "bill");
    await user.click(within(filters).getByRole("button", { name: "Apply filters" }));

    const params = new URLSearchParams(router.state.location.search);
    expect(Object.fromEntries(params)).toEqual({
      name: "bill",
      cluster: "3",
      team: "1",
      state: "STABLE",
      group_type: "share",
    });
    const last = requestsOf(fetchSpy)
      .filter((request) => request.url.includes("/consumer-groups/"))
      .at(-1)!;
    expect(query(last).get("cluster")).toBe("3");
    expect(query(last).get("team")).toBe("1");
    expect(query(last).get("group_type")).toBe("share");
    expect(query(last).get("state")).toBe("STABLE");
    expect(query(last).get("name")).toBe("bill");
  });

  it("reads filters from a shared URL", async () => {
    const fetchSpy = stubGroups([]);
    renderPage(<GroupsPage />, "/groups", "/groups?state=DEAD&cluster=3");
    expect(await screen.findByText("No groups match")).toBeInTheDocument();
    const request = requestsOf(fetchSpy).find((candidate) => candidate.url.includes("/consumer-groups/"))!;
    expect(query(request).get("state")).toBe("DEAD");
    expect(screen.getByLabelText("State")).toHaveValue("DEAD");
  });

  it("explains where groups come from when there are none", async () => {
    stubGroups([]);
    renderPage(<GroupsPage />, "/groups", "/groups");
    expect(await screen.findByText("No consumer groups yet")).toBeInTheDocument();
  });

  it("shows the error when groups cannot be loaded", async () => {
    stubGroups([], {
      "GET /api/v1/consumer-groups/": json(503, { error: { code: "unavailable", message: "Try later.", details: {} } }),
    });
    renderPage(<GroupsPage />, "/groups", "/groups");
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not load the consumer groups");
  });
});
