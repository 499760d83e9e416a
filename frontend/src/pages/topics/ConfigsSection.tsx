import { useState, type FormEvent } from "react";

import { useUpdateTopicConfigs } from "../../api/hooks/topics";
import type { TopicDetail } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { Field, FormError } from "../../components/Field";
import { configProblem, readableValue } from "../../lib/configValues";
import { formErrorsOf } from "../../lib/formErrors";
import { LiveOperation } from "../clusters/OperationProgress";
import { ConfigValueEditor } from "../configs/ConfigValueEditor";
import { ConfigsTable, SOURCE_LABELS, type ConfigRow } from "../configs/ConfigsTable";

export function ConfigsSection({ topic, canChange }: { topic: TopicDetail; canChange: boolean }) {
  const [editing, setEditing] = useState<ConfigRow | null>(null);

  function action(row: ConfigRow) {
    if (row.read_only) return <span className="muted">read-only</span>;
    if (!row.rule.allowed) return <span className="muted">not allowed by the team's policy</span>;
    return (
      <button type="button" className="button" aria-label={`Edit ${row.name}`} onClick={() => setEditing(row)}>
        Edit
      </button>
    );
  }

  return (
    <section className="section" aria-labelledby="configs-heading">
      <h2 id="configs-heading" className="section__title">
        Configs
      </h2>
      <ConfigsTable label="Topic configs" configs={topic.live.configs} actions={canChange ? action : undefined} />
      <Dialog open={editing !== null} title={`Edit ${editing?.name ?? ""}`} onClose={() => setEditing(null)}>
        {editing ? <EditConfigForm topic={topic} config={editing} onDone={() => setEditing(null)} /> : null}
      </Dialog>
    </section>
  );
}

export function EditConfigForm({
  topic,
  config,
  onDone,
}: {
  topic: TopicDetail;
  config: ConfigRow;
  onDone: () => void;
}) {
  const update = useUpdateTopicConfigs(topic.id);
  const [value, setValue] = useState(config.value ?? "");
  const [inputError, setInputError] = useState<string | null>(null);
  const [touched, setTouched] = useState(false);
  // Set when the cluster did not confirm the change in time (202): the form follows the operation.
  const [confirming, setConfirming] = useState<number | null>(null);
  const isOverride = config.source === "DYNAMIC_TOPIC_CONFIG";
  const problem = inputError ?? configProblem(value, config);
  const server = formErrorsOf(update.error, ["configs"]);
  const bounds = [
    // A minimum of 0 only rules out "unlimited" (-1), which the maximum already says.
    config.rule.minimum ? `at least ${readableValue(String(config.rule.minimum), config)}` : null,
    config.rule.maximum !== null ? `at most ${readableValue(String(config.rule.maximum), config)}` : null,
  ].filter(Boolean);

  function submit(event: FormEvent) {
    event.preventDefault();
    setTouched(true);
    if (problem) return;
    update.mutate(
      { [config.name]: value.trim() },
      { onSuccess: (result) => ("operation" in result ? setConfirming(result.operation.id) : onDone()) },
    );
  }

  if (confirming !== null) return <LiveOperation id={confirming} />;

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
        hint={isOverride ? "Saving changes the topic override." : "Saving makes it a topic override."}
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
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
        {isOverride ? (
          <button
            type="button"
            className="button"
            disabled={update.isPending}
            onClick={() => update.mutate({ [config.name]: null }, { onSuccess: onDone })}
          >
            Reset to default
          </button>
        ) : null}
        <button type="submit" className="button button--primary" disabled={update.isPending || (touched && !!problem)}>
          {update.isPending ? "Saving…" : "Save"}
        </button>
      </div>
    </form>
  );
}
