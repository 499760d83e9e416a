import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it } from "vitest";

import type { ConfigEntry } from "../../api/types";
import { Field } from "../../components/Field";
import { configProblem } from "../../lib/configValues";
import { configEntry } from "../../test/configFixtures";
import { ConfigValueEditor } from "./ConfigValueEditor";

/** The editor in a field, showing the raw value it produces and the problem the form would show. */
function Harness({ entry, initial }: { entry: ConfigEntry; initial: string }) {
  const [value, setValue] = useState(initial);
  const [inputError, setInputError] = useState<string | null>(null);
  const problem = inputError ?? configProblem(value, entry);
  return (
    <>
      <Field label="New value" error={problem ?? undefined}>
        {(control) => (
          <ConfigValueEditor
            name="config"
            entry={entry}
            value={value}
            control={control}
            onChange={setValue}
            onInputError={setInputError}
          />
        )}
      </Field>
      <output aria-label="raw">{value}</output>
    </>
  );
}

const retention = configEntry({
  type: "long",
  unit: "ms",
  unlimited: "-1",
  rule: { allowed: true, minimum: 0, maximum: 7 * 86_400_000, reason: "" },
});

describe("ConfigValueEditor", () => {
  it("edits a duration in units and stores milliseconds", async () => {
    const user = userEvent.setup();
    render(<Harness entry={retention} initial="86400000" />);
    const amount = screen.getByLabelText("New value");
    expect(amount).toHaveValue("1");
    expect(screen.getByRole("combobox", { name: "Unit" })).toHaveValue("days");

    await user.clear(amount);
    await user.type(amount, "36");
    await user.selectOptions(screen.getByRole("combobox", { name: "Unit" }), "hours");
    expect(screen.getByLabelText("raw")).toHaveTextContent("129600000");
    expect(screen.queryByText(/the team's policy/)).not.toBeInTheDocument();

    await user.selectOptions(screen.getByRole("combobox", { name: "Unit" }), "days");
    expect(screen.getByText("At most 7 days (the team's policy).")).toBeInTheDocument();
  });

  it("switches to unlimited and marks what cannot be a value", async () => {
    const user = userEvent.setup();
    render(<Harness entry={retention} initial="3600000" />);
    await user.click(screen.getByRole("checkbox", { name: "Unlimited" }));
    expect(screen.getByLabelText("raw")).toHaveTextContent("-1");
    expect(screen.getByLabelText("New value")).toBeDisabled();
    expect(screen.getByText("At most 7 days (the team's policy).")).toBeInTheDocument();

    await user.click(screen.getByRole("checkbox", { name: "Unlimited" }));
    const amount = screen.getByLabelText("New value");
    await user.clear(amount);
    await user.type(amount, "abc");
    expect(screen.getByText("Enter a number of at least 0.")).toBeInTheDocument();
    expect(amount).toHaveAttribute("aria-invalid", "true");
  });

  it("offers an enum's values in a select", async () => {
    const user = userEvent.setup();
    const compression = configEntry({ type: "string", choices: ["producer", "gzip", "zstd"] });
    render(<Harness entry={compression} initial="producer" />);
    const select = screen.getByRole("combobox", { name: "New value" });
    expect([...select.querySelectorAll("option")].map((option) => option.value)).toEqual(["producer", "gzip", "zstd"]);
    await user.selectOptions(select, "zstd");
    expect(screen.getByLabelText("raw")).toHaveTextContent("zstd");
  });

  it("takes several values of a list config as checkboxes, in Kafka's order", async () => {
    const user = userEvent.setup();
    const cleanup = configEntry({ type: "list", choices: ["delete", "compact"], multiple: true });
    render(<Harness entry={cleanup} initial="compact" />);
    await user.click(screen.getByRole("checkbox", { name: "delete" }));
    expect(screen.getByLabelText("raw")).toHaveTextContent("delete,compact");
    await user.click(screen.getByRole("checkbox", { name: "delete" }));
    await user.click(screen.getByRole("checkbox", { name: "compact" }));
    expect(screen.getByText("Pick at least one value.")).toBeInTheDocument();
  });

  it("offers true and false for a boolean", () => {
    render(<Harness entry={configEntry({ type: "boolean" })} initial="false" />);
    expect(screen.getByRole("combobox", { name: "New value" })).toHaveValue("false");
  });
});
