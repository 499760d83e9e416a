import { useState, type FormEvent } from "react";

import { Field, FormError } from "../../components/Field";
import { configProblem, readableValue } from "../../lib/configValues";
import { formErrorsOf } from "../../lib/formErrors";
import { ConfigValueEditor } from "./ConfigValueEditor";
import { SOURCE_LABELS, type ConfigRow } from "./ConfigsTable";

/**
 * One config's editor: what it means, its value now and the default a reset returns to, the team
 * policy's bounds, a control that fits its type, checks before saving, and the cluster's refusal in
 * words. `save(null)` resets an override; the caller sends the change.
 */
export function ConfigEditForm({
  config,
  overrideSource,
  pending,
  error,
  save,
  onCancel,
}: {
  config: ConfigRow;
  /** The source of a value set at this level (DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG). */
  overrideSource: string;
  pending: boolean;
  error: unknown;
  save: (value: string | null) => void;
  onCancel: () => void;
}) {
  const [value, setValue] = useState(config.value ?? "");
  const [inputError, setInputError] = useState<string | null>(null);
  const [touched, setTouched] = useState(false);
  const isOverride = config.source === overrideSource;
  const overrideLabel = SOURCE_LABELS[overrideSource] ?? overrideSource;
  const problem = inputError ?? configProblem(value, config);
  const server = formErrorsOf(error, ["configs"]);
  const bounds = [
    // A minimum of 0 only rules out "unlimited" (-1), which the maximum already says.
    config.rule.minimum ? `at least ${readableValue(String(config.rule.minimum), config)}` : null,
    config.rule.maximum !== null ? `at most ${readableValue(String(config.rule.maximum), config)}` : null,
  ].filter(Boolean);

  function submit(event: FormEvent) {
    event.preventDefault();
    setTouched(true);
    if (problem) return;
    save(value.trim());
  }

  return (
    <form onSubmit={submit} noValidate>
      {config.documentation ? <p className="config-doc">{config.documentation}</p> : null}
      <dl className="config-facts">
        <dt>Now</dt>
        <dd>
          {readableValue(config.value, config)}{" "}
          <span className="muted">({SOURCE_LABELS[config.source] ?? config.source})</span>
        </dd>
        {config.default ? (
          <>
            <dt>Default</dt>
            <dd>
              {readableValue(config.default.value, config)}{" "}
              <span className="muted">
                ({config.default.name}, {SOURCE_LABELS[config.default.source] ?? config.default.source})
              </span>
            </dd>
          </>
        ) : null}
        {bounds.length > 0 ? (
          <>
            <dt>Team policy</dt>
            <dd>
              {bounds.join(", ")}
              {config.rule.reason ? <span className="muted"> — {config.rule.reason}</span> : null}
            </dd>
          </>
        ) : null}
      </dl>
      <Field
        label="New value"
        hint={isOverride ? `Saving changes the ${overrideLabel}.` : `Saving makes it a ${overrideLabel}.`}
        error={(touched || inputError ? problem : null) ?? server.fields.configs}
      >
        {(control) => (
          <ConfigValueEditor
            name={config.name}
            entry={config}
            value={value}
            control={control}
            onChange={(raw) => {
              setTouched(true);
              setValue(raw);
            }}
            onInputError={setInputError}
          />
        )}
      </Field>
      {value.trim() !== "" && !problem ? (
        <p className="muted" aria-live="polite">
          Will be stored as <span className="mono">{value.trim()}</span> ({readableValue(value.trim(), config)}).
        </p>
      ) : null}
      <FormError message={server.form} />
      <div className="dialog__actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        {isOverride ? (
          <button type="button" className="button" disabled={pending} onClick={() => save(null)}>
            Reset to default
          </button>
        ) : null}
        <button type="submit" className="button button--primary" disabled={pending || (touched && !!problem)}>
          {pending ? "Saving…" : "Save"}
        </button>
      </div>
    </form>
  );
}
