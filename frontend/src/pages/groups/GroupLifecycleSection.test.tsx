import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, stubFetch } from "../../test/fetchStub";
import { renderPage } from "../../test/renderPage";
import { GroupLifecycleSection } from "./GroupLifecycleSection";
import { groupDetail } from "./groupFixtures";

const twoTopics = groupDetail({
  live: {
    ...groupDetail().live,
    offsets: [
      { topic: "payments.orders", partition: 0, committed_offset: 1, log_end_offset: 5, lag: 4 },
      { topic: "payments.refunds", partition: 0, committed_offset: 2, log_end_offset: 2, lag: 0 },
    ],
  },
});

const renderSection = (group = twoTopics) =>
  renderPage(<GroupLifecycleSection group={group} />, "/groups/:id", "/groups/31");

describe("GroupLifecycleSection", () => {
  it("deletes the offsets of the chosen topics only, after the group's name is typed", async () => {
    const spy = stubFetch({ "POST /api/v1/consumer-groups/31/delete-offsets/": { status: 204 } }, json(200, {}));
    const { user } = renderSection();

    const button = screen.getByRole("button", { name: /Delete offsets/ });
    expect(button).toBeDisabled();
    await user.click(screen.getByRole("checkbox", { name: "payments.refunds" }));
    await user.click(screen.getByRole("button", { name: "Delete offsets (1 topic)" }));
    const confirm = screen.getByRole("alertdialog", { name: /offsets for payments.refunds/ });
    await user.type(within(confirm).getByRole("textbox"), "payments.billing");
    await user.click(within(confirm).getByRole("button", { name: "Delete offsets" }));

    expect(await screen.findByRole("status")).toHaveTextContent("Deleted.");
    const posts = requestsOf(spy).filter((request) => request.method === "POST");
    expect(posts).toHaveLength(1);
    expect(await posts[0]?.json()).toEqual({ topic: "payments.refunds" });
  });

  it("shows the cluster's refusal in words when consumers are still subscribed", async () => {
    stubFetch(
      {
        "POST /api/v1/consumer-groups/31/delete-offsets/": json(409, {
          error: {
            code: "group_subscribed",
            message: "Active members of the group are subscribed to this topic.",
            details: {},
          },
        }),
      },
      json(200, {}),
    );
    const { user } = renderSection();

    await user.click(screen.getByRole("checkbox", { name: "payments.orders" }));
    await user.click(screen.getByRole("button", { name: "Delete offsets (1 topic)" }));
    const confirm = screen.getByRole("alertdialog");
    await user.type(within(confirm).getByRole("textbox"), "payments.billing");
    await user.click(within(confirm).getByRole("button", { name: "Delete offsets" }));

    expect(await within(confirm).findByRole("alert")).toHaveTextContent(
      "Active members of the group are subscribed to this topic.",
    );
  });

  it("warns that an active group cannot be deleted, and deletes an empty one", async () => {
    const active = groupDetail({
      live: {
        ...groupDetail().live,
        state: "STABLE",
        members: [{ member_id: "m", client_id: "c", host: "h", assignments: [] }],
      },
    });
    stubFetch({}, json(200, {}));
    renderSection(active);
    expect(screen.getByText(/The group has active consumers/)).toBeInTheDocument();
  });

  it("deletes the group once its name is typed", async () => {
    const spy = stubFetch({ "DELETE /api/v1/consumer-groups/31/": { status: 204 } }, json(200, {}));
    const { user } = renderSection();

    await user.click(screen.getByRole("button", { name: "Delete group" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete the consumer group payments.billing?" });
    await user.type(within(confirm).getByRole("textbox"), "payments.billing");
    await user.click(within(confirm).getByRole("button", { name: "Delete group" }));

    await waitFor(() => expect(requestsOf(spy).some((request) => request.method === "DELETE")).toBe(true));
  });
});
