import { useState, type FormEvent } from "react";

import { useTeamPolicy, useUpdatePolicy } from "../../api/hooks/policies";
import type { PolicyUpdate, Team, TeamPolicy } from "../../api/types";
import { Field, FormError } from "../../components/Field";
import { QueryView } from "../../components/states";
import { formErrorsOf } from "../../lib/formErrors";

type LimitField = "max_partitions_per_topic" | "max_retention_ms" | "max_total_partitions";

/** The API's bounds, checked here first so most mistakes never leave the page. */
const LIMITS: { name: LimitField; label: string; max: number }[] = [
  { name: "max_partitions_per_topic", label: "Max partitions per topic", max: 100_000 },
  { name: "max_retention_ms", label: "Max retention (ms)", max: Number.MAX_SAFE_INTEGER },
  { name: "max_total_partitions", label: "Max partitions in total", max: 1_000_000 },
];

interface PolicyDraft {
  naming_pattern: string;
  max_partitions_per_topic: string;
  max_retention_ms: string;
  max_total_partitions: string;
  allowed_topic_configs: string;
}

function draftOf(policy: TeamPolicy): PolicyDraft {
  const text = (value: number | null) => (value === null ? "" : String(value));
  return {
    naming_pattern: policy.naming_pattern ?? "",
    max_partitions_per_topic: text(policy.max_partitions_per_topic),
    max_retention_ms: text(policy.max_retention_ms),
    max_total_partitions: text(policy.max_total_partitions),
    allowed_topic_configs: (policy.allowed_topic_configs ?? []).join(", "),
  };
}

/** The changes to send, or the fields that are wrong. An empty limit means "no limit". */
export function validatePolicyDraft(
  draft: PolicyDraft,
): { changes: PolicyUpdate } | { errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const changes: PolicyUpdate = { naming_pattern: draft.naming_pattern.trim() };
  for (const { name, max } of LIMITS) {
    const text = draft[name].trim();
    if (text === "") {
      changes[name] = null;
    } else if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) {
      errors[name] = `A whole number from 1 to ${max.toLocaleString("en")}, or empty for no limit.`;
    } else {
      changes[name] = Number(text);
    }
  }
  const configs = draft.allowed_topic_configs
    .split(/[\s,]+/)
    .map((name) => name.trim())
    .filter(Boolean);
  changes.allowed_topic_configs = configs.length > 0 ? configs : null;
  return Object.keys(errors).length > 0 ? { errors } : { changes };
}

function limitText(value: number | null): string {
  return value === null ? "No limit" : value.toLocaleString();
}

export function PolicySection({ team, canEdit }: { team: Team; canEdit: boolean }) {
  const policy = useTeamPolicy(team.id);
  const [editing, setEditing] = useState(false);

  return (
    <section className="section" aria-labelledby="policy-heading">
      <h2 id="policy-heading" className="section__title">
        Policy
      </h2>
      <QueryView query={policy} errorTitle="Could not load the policy">
        {(data) =>
          data === null ? (
            <p className="muted">This team has no policy.</p>
          ) : editing ? (
            <PolicyForm policy={data} onDone={() => setEditing(false)} />
          ) : (
            <>
              <dl className="details">
                <dt>Naming pattern</dt>
                <dd className="mono">{data.naming_pattern || "Any name"}</dd>
                {LIMITS.map(({ name, label }) => (
                  <div key={name} style={{ display: "contents" }}>
                    <dt>{label}</dt>
                    <dd>{limitText(data[name])}</dd>
                  </div>
                ))}
                <dt>Allowed topic configs</dt>
                <dd className="mono">{data.allowed_topic_configs?.join(", ") || "All"}</dd>
              </dl>
              {canEdit ? (
                <button type="button" className="button" onClick={() => setEditing(true)}>
                  Edit policy
                </button>
              ) : null}
            </>
          )
        }
      </QueryView>
    </section>
  );
}

function PolicyForm({ policy, onDone }: { policy: TeamPolicy; onDone: () => void }) {
  const update = useUpdatePolicy();
  const [draft, setDraft] = useState<PolicyDraft>(() => draftOf(policy));
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  const server = formErrorsOf(update.error, [
    "naming_pattern",
    ...LIMITS.map((limit) => limit.name),
    "allowed_topic_configs",
  ]);
  const errors = { ...server.fields, ...localErrors };

  function submit(event: FormEvent) {
    event.preventDefault();
    const result = validatePolicyDraft(draft);
    if ("errors" in result) {
      setLocalErrors(result.errors);
      return;
    }
    setLocalErrors({});
    update.mutate({ id: policy.id, changes: result.changes }, { onSuccess: onDone });
  }

  const set = (name: keyof PolicyDraft) => (event: { target: { value: string } }) =>
    setDraft((current) => ({ ...current, [name]: event.target.value }));

  return (
    <form onSubmit={submit} aria-label="Edit policy" noValidate>
      <Field
        label="Naming pattern"
        hint="A regular expression topic names must match; empty allows any name."
        error={errors.naming_pattern}
      >
        {(control) => (
          <input
            {...control}
            className="input mono"
            maxLength={200}
            value={draft.naming_pattern}
            onChange={set("naming_pattern")}
          />
        )}
      </Field>
      {LIMITS.map(({ name, label }) => (
        <Field key={name} label={label} hint="Empty for no limit." error={errors[name]}>
          {(control) => (
            <input {...control} className="input" inputMode="numeric" value={draft[name]} onChange={set(name)} />
          )}
        </Field>
      ))}
      <Field
        label="Allowed topic configs"
        hint="Config names separated by commas; empty allows every config."
        error={errors.allowed_topic_configs}
      >
        {(control) => (
          <textarea
            {...control}
            className="input mono"
            rows={2}
            value={draft.allowed_topic_configs}
            onChange={set("allowed_topic_configs")}
          />
        )}
      </Field>
      <FormError message={server.form} />
      <div className="actions">
        <button type="submit" className="button button--primary" disabled={update.isPending}>
          Save policy
        </button>
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
