import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, stubFetch } from "../../test/fetchStub";
import { renderPage } from "../../test/renderPage";
import { SubjectLifecycleSection } from "./SubjectLifecycleSection";

const SUBJECT = "payments.orders-value";
const BASE = `/clusters/3/schema-registry/subjects/${SUBJECT}`;

function deletes(spy: ReturnType<typeof stubFetch>): string[] {
  return requestsOf(spy)
    .filter((request) => request.method === "DELETE")
    .map((request) => {
      const url = new URL(request.url);
      return `${url.pathname}${url.search}`;
    });
}

const renderSection = (versions: number[]) =>
  renderPage(<SubjectLifecycleSection cluster={3} subject={SUBJECT} versions={versions} />, "/", "/");

describe("SubjectLifecycleSection", () => {
  it("soft-deletes a version and offers the permanent delete only for soft-deleted ones", async () => {
    const spy = stubFetch({
      [`GET ${BASE}/versions`]: json(200, [1]),
      [`DELETE ${BASE}/versions/2`]: json(200, 2),
    });
    const { user } = renderSection([2, 3]);

    const permanent = await screen.findByRole("group", { name: "Soft-deleted versions" });
    expect(within(permanent).getByRole("button", { name: "Permanently delete version 1" })).toBeInTheDocument();
    expect(within(permanent).queryByRole("button", { name: /version 2/ })).not.toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Delete version 2" }));
    const confirm = screen.getByRole("alertdialog", { name: `Delete version 2 of ${SUBJECT}?` });
    await user.type(within(confirm).getByRole("textbox"), "version 2");
    await user.click(within(confirm).getByRole("button", { name: "Delete" }));

    await screen.findByRole("group", { name: "Live versions" });
    expect(deletes(spy)).toEqual([`${BASE}/versions/2`]);
  });

  it("deletes a soft-deleted subject permanently", async () => {
    const spy = stubFetch({
      [`GET ${BASE}/versions`]: json(200, [1, 2]),
      [`DELETE ${BASE}`]: json(200, [1, 2]),
    });
    const { user } = renderSection([]);

    await user.click(await screen.findByRole("button", { name: "Permanently delete subject" }));
    const confirm = screen.getByRole("alertdialog", { name: `Permanently delete the subject ${SUBJECT}?` });
    await user.type(within(confirm).getByRole("textbox"), SUBJECT);
    await user.click(within(confirm).getByRole("button", { name: "Delete permanently" }));

    await screen.findByRole("button", { name: "Permanently delete subject" });
    expect(deletes(spy)).toEqual([`${BASE}?permanent=true`]);
  });

  it("shows the registry's refusal", async () => {
    stubFetch({
      [`GET ${BASE}/versions`]: json(200, []),
      [`DELETE ${BASE}`]: json(422, { error_code: 42206, message: "One or more references exist to the schema" }),
    });
    const { user } = renderSection([1]);

    await user.click(screen.getByRole("button", { name: "Delete subject" }));
    const confirm = screen.getByRole("alertdialog");
    await user.type(within(confirm).getByRole("textbox"), SUBJECT);
    await user.click(within(confirm).getByRole("button", { name: "Delete" }));

    expect(await within(confirm).findByRole("alert")).toHaveTextContent("One or more references exist");
  });
});
