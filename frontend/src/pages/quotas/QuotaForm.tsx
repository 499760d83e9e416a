import { useId, useState, type FormEvent } from "react";

import { useCreateQuota, useUpdateQuota } from "../../api/hooks/quotas";
import type { ClientQuota, Cluster, ServiceAccount } from "../../api/types";
import { Field, FormActions, FormError } from "../../components/Field";
import { choicesOf, SelectField } from "../../components/FormFields";
import { formErrorsOf } from "../../lib/formErrors";

/** The quota keys Kafka knows for user and client-id entities (controlplane/quotas/choices.py). */
export const QUOTA_KEYS = [
  ["producer_byte_rate", "Produce bytes/s"],
  ["consumer_byte_rate", "Fetch bytes/s"],
  ["request_percentage", "Request time %"],
  ["controller_mutation_rate", "Partition mutations/s"],
] as const;
export type QuotaKey = (typeof QUOTA_KEYS)[number][0];

export function quotaValuesOf(quota: ClientQuota): Partial<Record<QuotaKey, number>> {
  const values = quota.values;
  return typeof values === "object" && values !== null ? (values as Partial<Record<QuotaKey, number>>) : {};
}

type EntityMode = "none" | "default" | "named";

function EntityPart({
  label,
  mode,
  name,
  onMode,
  onName,
  suggestions,
}: {
  label: string;
  mode: EntityMode;
  name: string;
  onMode: (mode: EntityMode) => void;
  onName: (name: string) => void;
  suggestions?: string[];
}) {
  const modeId = useId();
  const nameId = useId();
  const listId = useId();
  return (
    <div className="inline-form">
      <div className="field">
        <label htmlFor={modeId} className="field__label">
          {label}
        </label>
        <select
          id={modeId}
          className="input"
          value={mode}
          onChange={(event) => onMode(event.target.value as EntityMode)}
        >
          <option value="none">Any (not part of the entity)</option>
          <option value="named">Named</option>
          <option value="default">The default</option>
        </select>
      </div>
      {mode === "named" ? (
        <div className="field">
          <label htmlFor={nameId} className="field__label">
            {label} name
          </label>
          <input
            id={nameId}
            className="input mono"
            autoComplete="off"
            list={suggestions ? listId : undefined}
            value={name}
            onChange={(event) => onName(event.target.value)}
          />
          {suggestions ? (
            <datalist id={listId}>
              {suggestions.map((each) => (
                <option key={each} value={each} />
              ))}
            </datalist>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function ValueFields({
  values,
  onChange,
  errors,
}: {
  values: Record<QuotaKey, string>;
  onChange: (values: Record<QuotaKey, string>) => void;
  errors?: string;
}) {
  return (
    <fieldset className="config-rows">
      <legend className="field__label">Limits (empty: no limit)</legend>
      <div className="inline-form">
        {QUOTA_KEYS.map(([key, label]) => (
          <Field key={key} label={label}>
            {(control) => (
              <input
                {...control}
                className="input"
                type="number"
                min={0}
                value={values[key]}
                onChange={(event) => onChange({ ...values, [key]: event.target.value })}
              />
            )}
          </Field>
        ))}
      </div>
      {errors ? <p className="field__error">{errors}</p> : null}
    </fieldset>
  );
}

function valuesAsText(quota?: ClientQuota): Record<QuotaKey, string> {
  const values = quota ? quotaValuesOf(quota) : {};
  return Object.fromEntries(QUOTA_KEYS.map(([key]) => [key, values[key] != null ? String(values[key]) : ""])) as Record<
    QuotaKey,
    string
  >;
}

/** Empty inputs become null, which removes that limit on the cluster. */
function valuesForApi(values: Record<QuotaKey, string>): Record<string, number | null> {
  return Object.fromEntries(QUOTA_KEYS.map(([key]) => [key, values[key] === "" ? null : Number(values[key])]));
}

interface CreateQuotaFormProps {
  clusters: Cluster[];
  accounts: ServiceAccount[];
  onDone: () => void;
}

/** A quota for a user (a service account), a client id, both, or the defaults. */
export function CreateQuotaForm({ clusters, accounts, onDone }: CreateQuotaFormProps) {
  const create = useCreateQuota();
  const [cluster, setCluster] = useState<number | "">(clusters[0]?.id ?? "");
  const [userMode, setUserMode] = useState<EntityMode>("named");
  const [user, setUser] = useState(accounts[0]?.name ?? "");
  const [clientMode, setClientMode] = useState<EntityMode>("none");
  const [clientId, setClientId] = useState("");
  const [values, setValues] = useState(valuesAsText());
  const [localError, setLocalError] = useState<string | null>(null);
  const server = formErrorsOf(create.error, ["cluster", "entity", "values"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (userMode === "none" && clientMode === "none") {
      setLocalError("Choose a user, a client id or both.");
      return;
    }
    if (QUOTA_KEYS.every(([key]) => values[key] === "")) {
      setLocalError("Set at least one limit.");
      return;
    }
    setLocalError(null);
    if (cluster === "") return;
    const entity: { user?: string | null; client_id?: string | null } = {};
    if (userMode !== "none") entity.user = userMode === "named" ? user : null;
    if (clientMode !== "none") entity.client_id = clientMode === "named" ? clientId : null;
    const limits = Object.fromEntries(Object.entries(valuesForApi(values)).filter(([, value]) => value !== null));
    create.mutate({ cluster, entity, values: limits }, { onSuccess: onDone });
  }

  return (
    <form onSubmit={submit} noValidate>
      <SelectField
        label="Cluster"
        value={cluster}
        choices={choicesOf(clusters)}
        onChange={setCluster}
        error={server.fields.cluster}
      />
      <EntityPart
        label="User"
        mode={userMode}
        name={user}
        onMode={setUserMode}
        onName={setUser}
        suggestions={accounts.map((account) => account.name)}
      />
      <EntityPart label="Client id" mode={clientMode} name={clientId} onMode={setClientMode} onName={setClientId} />
      {server.fields.entity ? <p className="field__error">{server.fields.entity}</p> : null}
      <ValueFields values={values} onChange={setValues} errors={server.fields.values} />
      <FormError message={localError ?? server.form} />
      <FormActions submitLabel="Set quota" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}

/** Changes an existing quota's limits; clearing a field removes that limit. */
export function EditQuotaForm({ quota, onDone }: { quota: ClientQuota; onDone: () => void }) {
  const update = useUpdateQuota();
  const [values, setValues] = useState(valuesAsText(quota));
  const server = formErrorsOf(update.error, ["values"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    update.mutate({ id: quota.id, values: valuesForApi(values) }, { onSuccess: onDone });
  }

  return (
    <form onSubmit={submit} noValidate>
      <p className="mono">{quota.entity_key}</p>
      <ValueFields values={values} onChange={setValues} errors={server.fields.values} />
      <FormError message={server.form} />
      <FormActions submitLabel="Save" pending={update.isPending} onCancel={onDone} />
    </form>
  );
}
