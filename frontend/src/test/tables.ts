import { within } from "@testing-library/react";

/** The text of each body cell, row by row; the header row is left out. */
export function bodyCellTexts(table: HTMLElement): (string | null)[][] {
  return within(table)
    .getAllByRole("row")
    .slice(1)
    .map((row) =>
      within(row)
        .getAllByRole("cell")
        .map((cell) => cell.textContent),
    );
}
