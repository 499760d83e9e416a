import { useState } from "react";

import type { ConfigEntry } from "../../api/types";
import type { FieldControlProps } from "../../components/Field";
import { baseUnit, splitIntoUnit, toRawValue, unitOptions } from "../../lib/configValues";

interface EditorProps {
  name: string;
  entry: ConfigEntry;
  /** The raw value Kafka stores, as a string. */
  value: string;
  onChange: (raw: string) => void;
  /** Set when the amount typed cannot become a raw value (not a number, not whole in the base unit). */
  onInputError: (message: string | null) => void;
  control: FieldControlProps;
}

/**
 * The control that fits the config: a select for an enum, checkboxes for a list of choices
 * (cleanup.policy), true/false for a boolean, an amount with a unit for durations and sizes (with an
 * "Unlimited" switch where Kafka has a value for it), else a text box.
 */
export function ConfigValueEditor(props: EditorProps) {
  const { entry, value, onChange, control, name } = props;
  if (entry.choices.length > 0 && entry.multiple) return <ChoiceList {...props} />;
  if (entry.choices.length > 0 || entry.type === "boolean") {
    const choices = entry.choices.length > 0 ? entry.choices : ["true", "false"];
    return (
      <select {...control} className="input" value={value} onChange={(event) => onChange(event.target.value)}>
        {choices.includes(value) ? null : <option value={value}>{value || "(choose)"}</option>}
        {choices.map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
    );
  }
  if (unitOptions(entry.unit).length > 0) return <AmountWithUnit {...props} />;
  return (
    <input
      {...control}
      className="input mono"
      autoComplete="off"
      aria-label={name}
      value={value}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}

function ChoiceList({ entry, value, onChange, control }: EditorProps) {
  const picked = value
    .split(",")
    .map((each) => each.trim())
    .filter(Boolean);
  function toggle(choice: string, on: boolean) {
    const next = on ? [...picked, choice] : picked.filter((each) => each !== choice);
    // Kafka's order for the combined policy; the broker accepts either.
    onChange(entry.choices.filter((each) => next.includes(each)).join(","));
  }
  return (
    <div id={control.id} role="group" aria-describedby={control["aria-describedby"]} className="config-choices">
      {entry.choices.map((choice) => (
        <label key={choice} className="config-choices__choice">
          <input
            type="checkbox"
            checked={picked.includes(choice)}
            onChange={(event) => toggle(choice, event.target.checked)}
          />{" "}
          {choice}
        </label>
      ))}
    </div>
  );
}

function AmountWithUnit({ entry, value, onChange, onInputError, control }: EditorProps) {
  const options = unitOptions(entry.unit);
  const unlimited = entry.unlimited !== null && value.trim() === entry.unlimited;
  const split = unlimited ? null : splitIntoUnit(value, entry.unit);
  // The typed text and unit are kept as typed ("1.5" hours) and turned into the raw value on each change.
  const [amount, setAmount] = useState(split?.amount ?? (unlimited ? "" : value));
  const [unitLabel, setUnitLabel] = useState(split?.unit.label ?? baseUnit(options).label);
  const unitOf = (label: string) => options.find((each) => each.label === label) ?? baseUnit(options);

  function update(nextAmount: string, nextUnit: string) {
    setAmount(nextAmount);
    setUnitLabel(nextUnit);
    const converted = toRawValue(nextAmount, unitOf(nextUnit));
    if ("error" in converted) {
      onInputError(converted.error);
    } else {
      onInputError(null);
      onChange(converted.raw);
    }
  }

  function setUnlimited(on: boolean) {
    if (on && entry.unlimited !== null) {
      onInputError(null);
      onChange(entry.unlimited);
    } else {
      update(amount || "1", unitLabel);
    }
  }

  return (
    <div className="config-amount">
      <input
        {...control}
        className="input config-amount__number"
        inputMode="decimal"
        autoComplete="off"
        disabled={unlimited}
        value={unlimited ? "" : amount}
        onChange={(event) => update(event.target.value, unitLabel)}
      />
      <select
        className="input config-amount__unit"
        aria-label="Unit"
        disabled={unlimited}
        value={unitLabel}
        onChange={(event) => update(amount, event.target.value)}
      >
        {options.map((option) => (
          <option key={option.label} value={option.label}>
            {option.label}
          </option>
        ))}
      </select>
      {entry.unlimited !== null ? (
        <label className="config-amount__unlimited">
          <input type="checkbox" checked={unlimited} onChange={(event) => setUnlimited(event.target.checked)} />{" "}
          Unlimited
        </label>
      ) : null}
    </div>
  );
}
