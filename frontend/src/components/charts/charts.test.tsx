import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";

import { BarChart } from "./BarChart";
import { formatSeconds } from "./format";
import { TimeSeriesChart } from "./TimeSeriesChart";

describe("TimeSeriesChart", () => {
  it("shows an empty state when there are no samples", () => {
    render(<TimeSeriesChart label="Lag" timestamps={[]} series={[{ label: "total", values: [] }]} />);
    expect(screen.getByText("No data in this range")).toBeInTheDocument();
  });

  it("offers every sample as a table, with gaps shown as dashes", async () => {
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    render(
      <TimeSeriesChart
        label="Lag in messages"
        timestamps={[start, start + 60_000]}
        series={[
          { label: "total", values: [1500, 20] },
          { label: "p0", values: [null, 7] },
        ]}
      />,
    );
    await userEvent.click(screen.getByText("Show the data as a table"));
    const table = screen.getByRole("table", { name: "Lag in messages data" });
    const rows = within(table).getAllByRole("row");
    expect(rows).toHaveLength(3);
    expect(
      within(rows[0]!)
        .getAllByRole("columnheader")
        .map((cell) => cell.textContent),
    ).toEqual(["Time", "total", "p0"]);
    expect(
      within(rows[1]!)
        .getAllByRole("cell")
        .slice(1)
        .map((cell) => cell.textContent),
    ).toEqual(["1.5K", "—"]);
    expect(
      within(rows[2]!)
        .getAllByRole("cell")
        .slice(1)
        .map((cell) => cell.textContent),
    ).toEqual(["20", "7"]);
  });
});

describe("BarChart", () => {
  it("labels each bar with its value and scales it to the largest", () => {
    const { container } = render(
      <BarChart
        label="Top keys"
        bars={[
          { label: "user-1", value: 200 },
          { label: "user-2", value: 50 },
        ]}
      />,
    );
    const list = screen.getByRole("list", { name: "Top keys" });
    expect(
      within(list)
        .getAllByRole("listitem")
        .map((item) => item.textContent),
    ).toEqual(["user-1200", "user-250"]);
    const widths = [...container.querySelectorAll("rect")].map((rect) => rect.getAttribute("width"));
    expect(widths).toEqual(["100", "25"]);
  });

  it("says so when there is nothing to draw", () => {
    render(<BarChart label="Top keys" bars={[]} />);
    expect(screen.getByText("No values.")).toBeInTheDocument();
  });
});

describe("formatSeconds", () => {
  it("picks the largest unit that fits", () => {
    expect(formatSeconds(0.4)).toBe("0.4 s");
    expect(formatSeconds(90)).toBe("1.5 min");
    expect(formatSeconds(7200)).toBe("2 h");
    expect(formatSeconds(3 * 86_400)).toBe("3 d");
  });
});
