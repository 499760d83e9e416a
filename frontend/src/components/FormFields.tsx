import type { ReactNode } from "react";

import { Field } from "./Field";

/** An option: its value and what the person reads. */
export type Choice<Value extends string | number> = readonly [Value, string];

interface SelectFieldProps<Value extends string | number> {
  label: string;
  value: Value | "";
  choices: readonly Choice<Value>[];
  onChange: (value: Value) => void;
  hint?: ReactNode;
  error?: string;
  /** Offers an empty first option with this text (e.g. "All teams"); choosing it hands "" to onChange. */
  emptyLabel?: string;
  disabled?: boolean;
}

/** A labelled drop-down whose values keep their type (numbers stay numbers). */
export function SelectField<Value extends string | number>({
  label,
  value,
  choices,
  onChange,
  hint,
  error,
  emptyLabel,
  disabled,
}: SelectFieldProps<Value>) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(control) => (
        <select
          {...control}
          className="input"
          value={value}
          disabled={disabled}
          onChange={(event) => {
            const chosen = choices.find(([each]) => String(each) === event.target.value);
            onChange(chosen ? chosen[0] : ("" as Value));
          }}
        >
          {emptyLabel !== undefined ? <option value="">{emptyLabel}</option> : null}
          {choices.map(([each, text]) => (
            <option key={each} value={each}>
              {text}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** Named records as choices, e.g. teams or clusters by id. */
export function choicesOf<Item extends { id: number; name: string }>(items: readonly Item[]): Choice<number>[] {
  return items.map((item) => [item.id, item.name] as const);
}

interface TextFieldProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: ReactNode;
  error?: string;
  placeholder?: string;
  /** Names, prefixes, principals: shown in the monospace font. */
  mono?: boolean;
  /** The id of a <datalist> with suggestions. */
  list?: string;
}

/** A labelled one-line text input that the browser does not autofill. */
export function TextField({ label, value, onChange, hint, error, placeholder, mono = true, list }: TextFieldProps) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(control) => (
        <input
          {...control}
          className={mono ? "input mono" : "input"}
          autoComplete="off"
          list={list}
          placeholder={placeholder}
          value={value}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
    </Field>
  );
}
