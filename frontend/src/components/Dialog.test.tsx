import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it } from "vitest";

import { ConfirmDialog } from "./ConfirmDialog";
import { Dialog } from "./Dialog";

function Opener({ confirm = false }: { confirm?: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <main>
      <button type="button" onClick={() => setOpen(true)}>
        Open
      </button>
      {confirm ? (
        <ConfirmDialog
          open={open}
          title="Delete orders?"
          confirmationText="orders"
          onConfirm={() => setOpen(false)}
          onCancel={() => setOpen(false)}
        />
      ) : (
        <Dialog open={open} title="Produce" onClose={() => setOpen(false)}>
          <label>
            Key <input />
          </label>
          <button type="button">Cancel</button>
          <button type="submit">Produce</button>
        </Dialog>
      )}
    </main>
  );
}

describe("Dialog", () => {
  it("closes on Escape even when focus has left it, and gives focus back to its opener", async () => {
    const user = userEvent.setup();
    render(<Opener />);
    await user.click(screen.getByRole("button", { name: "Open" }));
    expect(screen.getByRole("dialog", { name: "Produce" })).toBeInTheDocument();
    expect(screen.getByLabelText("Key")).toHaveFocus();

    // A submit button that disables itself while the request runs drops focus to the page's body.
    (document.activeElement as HTMLElement).blur();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Open" })).toHaveFocus();
  });

  it("keeps Tab and Shift+Tab inside the dialog", async () => {
    const user = userEvent.setup();
    render(<Opener />);
    await user.click(screen.getByRole("button", { name: "Open" }));
    const dialog = screen.getByRole("dialog", { name: "Produce" });
    const close = screen.getByRole("button", { name: "Close" });

    await user.tab();
    expect(screen.getByRole("button", { name: "Cancel" })).toHaveFocus();
    await user.tab();
    expect(screen.getByRole("button", { name: "Produce" })).toHaveFocus();
    await user.tab();
    expect(close).toHaveFocus();
    await user.tab({ shift: true });
    expect(screen.getByRole("button", { name: "Produce" })).toHaveFocus();
    (document.activeElement as HTMLElement).blur();
    await user.tab();
    expect(dialog.contains(document.activeElement)).toBe(true);
  });

  it("closes a confirmation on Escape from anywhere", async () => {
    const user = userEvent.setup();
    render(<Opener confirm />);
    await user.click(screen.getByRole("button", { name: "Open" }));
    expect(screen.getByLabelText(/to confirm/)).toHaveFocus();
    (document.activeElement as HTMLElement).blur();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Open" })).toHaveFocus();
  });
});
