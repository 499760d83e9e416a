import { createColumnHelper } from "@tanstack/react-table";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";

import { DataTable, VIRTUALIZE_ABOVE_ROWS } from "./DataTable";

interface Topic {
  name: string;
  partitions: number;
}

const column = createColumnHelper<Topic>();
const columns = [column.accessor("name", { header: "Name" }), column.accessor("partitions", { header: "Partitions" })];

const topics: Topic[] = [
  { name: "orders", partitions: 12 },
  { name: "payments", partitions: 3 },
  { name: "audit-events", partitions: 6 },
  { name: "order-returns", partitions: 1 },
];

function bodyRows(): string[][] {
  const table = screen.getByRole("table", { name: "Topics" });
  const [, body] = within(table).getAllByRole("rowgroup");
  return within(body!)
    .queryAllByRole("row")
    .map((row) =>
      within(row)
        .queryAllByRole("cell")
        .map((cell) => cell.textContent ?? ""),
    );
}

function names(): string[] {
  return bodyRows().map((cells) => cells[0] ?? "");
}

describe("DataTable", () => {
  it("sorts by a column when its header is clicked, then reverses", async () => {
    const user = userEvent.setup();
    render(<DataTable label="Topics" columns={columns} rows={topics} getRowId={(topic) => topic.name} />);
    expect(names()).toEqual(["orders", "payments", "audit-events", "order-returns"]);

    await user.click(screen.getByRole("button", { name: /Name/ }));
    expect(names()).toEqual(["audit-events", "order-returns", "orders", "payments"]);
    expect(screen.getByRole("columnheader", { name: /Name/ })).toHaveAttribute("aria-sort", "ascending");

    await user.click(screen.getByRole("button", { name: /Name/ }));
    expect(names()).toEqual(["payments", "orders", "order-returns", "audit-events"]);
    expect(screen.getByRole("columnheader", { name: /Name/ })).toHaveAttribute("aria-sort", "descending");
  });

  it("sorts numbers as numbers", async () => {
    const user = userEvent.setup();
    render(<DataTable label="Topics" columns={columns} rows={topics} />);

    await user.click(screen.getByRole("button", { name: /Partitions/ }));

    // Tanstack sorts numeric columns descending first.
    const partitions = bodyRows().map((cells) => cells[1]);
    expect(partitions).toEqual(["12", "6", "3", "1"]);
  });

  it("starts from the initial sorting it is given", () => {
    render(
      <DataTable label="Topics" columns={columns} rows={topics} initialSorting={[{ id: "partitions", desc: false }]} />,
    );
    expect(names()).toEqual(["order-returns", "payments", "audit-events", "orders"]);
  });

  it("filters rows on the text typed and says when nothing matches", async () => {
    const user = userEvent.setup();
    render(<DataTable label="Topics" columns={columns} rows={topics} />);
    const filter = screen.getByLabelText("Filter topics");

    await user.type(filter, "ORDER");
    expect(names()).toEqual(["orders", "order-returns"]);
    expect(screen.getByText("2 of 4 rows")).toBeInTheDocument();

    await user.clear(filter);
    await user.type(filter, "nothing-like-this");
    expect(screen.getByText("No rows match “nothing-like-this”.")).toBeInTheDocument();
  });

  it("pages through rows and goes back to the first page when filtering", async () => {
    const user = userEvent.setup();
    const many = Array.from({ length: 7 }, (_, i) => ({ name: `topic-${i}`, partitions: i }));
    render(<DataTable label="Topics" columns={columns} rows={many} pagination={{ pageSize: 3 }} />);

    expect(names()).toEqual(["topic-0", "topic-1", "topic-2"]);
    expect(screen.getByText("Page 1 of 3")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Previous" })).toBeDisabled();

    await user.click(screen.getByRole("button", { name: "Next" }));
    await user.click(screen.getByRole("button", { name: "Next" }));
    expect(names()).toEqual(["topic-6"]);
    expect(screen.getByRole("button", { name: "Next" })).toBeDisabled();

    await user.type(screen.getByLabelText("Filter topics"), "topic-");
    expect(names()).toEqual(["topic-0", "topic-1", "topic-2"]);
  });

  it("renders only the rows in view of a long unpaginated list", () => {
    // jsdom does no layout; give the scroll box the height a browser would.
    vi.spyOn(Element.prototype, "clientHeight", "get").mockReturnValue(560);
    const count = VIRTUALIZE_ABOVE_ROWS * 10;
    const many = Array.from({ length: count }, (_, i) => ({ name: `topic-${i}`, partitions: i }));
    render(<DataTable label="Topics" columns={columns} rows={many} pagination={false} />);

    const rendered = names().filter(Boolean);
    expect(rendered[0]).toBe("topic-0");
    expect(rendered.length).toBeGreaterThan(5);
    expect(rendered.length).toBeLessThan(100);
    expect(screen.getByText(`${count} rows`)).toBeInTheDocument();
  });

  it("shows the empty state when there are no rows", () => {
    render(<DataTable label="Topics" columns={columns} rows={[]} emptyTitle="No topics yet" />);
    expect(screen.getByText("No topics yet")).toBeInTheDocument();
    expect(screen.queryByRole("table")).not.toBeInTheDocument();
  });
});
