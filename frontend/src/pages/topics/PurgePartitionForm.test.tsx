import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, stubFetch } from "../../test/fetchStub";
import { renderPage } from "../../test/renderPage";
import { topicDetail } from "../../test/topicFixtures";
import { PurgePartitionForm } from "./PurgePartitionForm";

const renderForm = () => renderPage(<PurgePartitionForm topic={topicDetail()} onDone={() => {}} />, "/", "/");

describe("PurgePartitionForm", () => {
  it("deletes one partition's records before the chosen offset and reports its new start", async () => {
    const spy = stubFetch(
      { [`POST /api/v1/topics/${topicDetail().id}/purge/`]: json(200, { start_offsets: { "1": 4 } }) },
      json(200, {}),
    );
    const { user } = renderForm();

    await user.selectOptions(screen.getByLabelText("Partition"), "1");
    const offset = screen.getByLabelText("Delete records before offset");
    expect(offset).toHaveValue(5); // the partition's end: everything
    await user.clear(offset);
    await user.type(offset, "4");
    expect(screen.getByText(/2 records of partition 1 will be deleted/)).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Delete records" }));

    expect(await screen.findByRole("status")).toHaveTextContent("Partition 1 now starts at offset 4.");
    const post = requestsOf(spy).find((request) => request.method === "POST");
    expect(await post?.json()).toEqual({ partition: 1, before_offset: 4 });
  });

  it("refuses an offset outside the partition's range without sending it", async () => {
    const spy = stubFetch({}, json(200, {}));
    const { user } = renderForm();

    const offset = screen.getByLabelText("Delete records before offset");
    await user.clear(offset);
    await user.type(offset, "9");

    expect(screen.getByText("Choose an offset from 0 to 7.")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Delete records" })).toBeDisabled();
    expect(requestsOf(spy).filter((request) => request.method === "POST")).toHaveLength(0);
  });
});
