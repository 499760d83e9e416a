import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { formatTimestamp } from "../lib/time";
import { Timestamp } from "./Timestamp";

describe("Timestamp", () => {
  it("shows the local time and keeps the exact UTC instant machine-readable", () => {
    render(<Timestamp value="2026-03-01T23:30:00Z" />);

    const time = screen.getByText(formatTimestamp("2026-03-01T23:30:00Z"));
    expect(time.tagName).toBe("TIME");
    expect(time).toHaveAttribute("datetime", "2026-03-01T23:30:00.000Z");
    expect(time).toHaveAttribute("title", "2026-03-01T23:30:00.000Z");
  });

  it("shows a dash for a value that is not a date", () => {
    render(<Timestamp value="not a date" />);
    expect(screen.getByText("—")).toBeInTheDocument();
  });
});
