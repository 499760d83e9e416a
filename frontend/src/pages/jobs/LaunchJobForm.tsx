import { useState, type FormEvent } from "react";

import { useClusters } from "../../api/hooks/clusters";
import {
  useCreateStream,
  useLaunchJob,
  type CatalogEntry,
  type JobName,
  type JobRun,
  type StreamingJob,
  type StreamingJobName,
} from "../../api/hooks/jobs";
import { useServiceAccounts } from "../../api/hooks/serviceAccounts";
import type { Team } from "../../api/types";
import { Field, FormError } from "../../components/Field";
import { SelectField } from "../../components/FormFields";
import { formErrorsOf } from "../../lib/formErrors";
import { buildParameters, fieldsOf, type ParameterField } from "./parameterForm";

interface LaunchJobFormProps {
  catalog: CatalogEntry[];
  initialJob: string;
  /** Teams in which the person may launch jobs (developers and up). */
  teams: Team[];
  /** A batch run, or a streaming job that runs until it is stopped (it needs a name then). */
  kind?: "run" | "stream";
  onLaunched: (launched: JobRun | StreamingJob) => void;
}

/** Records as drop-down choices keyed by their id as text (the form keeps its values as text). */
const named = (items: readonly { id: number; name: string }[]) =>
  items.map((item) => [String(item.id), item.name] as const);

const SERVER_FIELDS = [
  "name",
  "team",
  "cluster",
  "service_account",
  "password",
  "compute_target",
  "time_limit_seconds",
];

/** Launch a catalog job (or create a streaming job): where it reads, as whom, and the job's own typed parameters. */
export function LaunchJobForm({ catalog, initialJob, teams, kind = "run", onLaunched }: LaunchJobFormProps) {
  const streaming = kind === "stream";
  const [job, setJob] = useState(initialJob);
  const [name, setName] = useState("");
  const [team, setTeam] = useState(teams[0] ? String(teams[0].id) : "");
  const [cluster, setCluster] = useState("");
  const [serviceAccount, setServiceAccount] = useState("");
  const [password, setPassword] = useState("");
  const [timeLimit, setTimeLimit] = useState("1800");
  const [computeTarget, setComputeTarget] = useState("");
  const [values, setValues] = useState<Record<string, string>>({});
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const launchRun = useLaunchJob();
  const createStream = useCreateStream();
  const launch = streaming ? createStream : launchRun;
  const clusters = useClusters();
  const accounts = useServiceAccounts(team ? Number(team) : undefined);

  const entry = catalog.find((candidate) => candidate.job === job);
  const fields = entry ? fieldsOf(entry.parameters, entry.required) : [];
  const organization = teams.find((candidate) => String(candidate.id) === team)?.organization;
  const teamClusters = (clusters.data ?? []).filter((candidate) => candidate.organization === organization);
  const serverErrors = formErrorsOf(launch.error, [...SERVER_FIELDS, "parameters"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    const built = buildParameters(fields, values);
    const local: Record<string, string> = "errors" in built ? { ...built.errors } : {};
    if (!team) local.team = "Pick a team.";
    if (!cluster) local.cluster = "Pick a cluster.";
    if (streaming && !name.trim()) local.name = "Name the streaming job.";
    setFieldErrors(local);
    if ("errors" in built || Object.keys(local).length > 0) return;
    const common = {
      team: Number(team),
      cluster: Number(cluster),
      service_account: serviceAccount ? Number(serviceAccount) : null,
      password,
      parameters: built.parameters,
      ...(computeTarget.trim() ? { compute_target: computeTarget.trim() } : {}),
    };
    if (streaming) {
      createStream.mutate({ ...common, name: name.trim(), job: job as StreamingJobName }, { onSuccess: onLaunched });
    } else {
      launchRun.mutate(
        { ...common, job: job as JobName, time_limit_seconds: Number(timeLimit) || 1800 },
        { onSuccess: onLaunched },
      );
    }
  }

  const errorOf = (name: string) => fieldErrors[name] ?? serverErrors.fields[name];

  return (
    <form
      className="launch-form"
      onSubmit={submit}
      aria-label={streaming ? "Create a streaming job" : "Launch a job"}
      noValidate
    >
      {streaming ? (
        <Field
          label="Name"
          hint="Letters, digits, - and _; unique in the team. Its checkpoint and consumer group are named after its id."
          error={errorOf("name")}
        >
          {(control) => (
            <input {...control} className="input mono" value={name} onChange={(event) => setName(event.target.value)} />
          )}
        </Field>
      ) : null}
      <SelectField
        label="Job"
        hint={entry?.description}
        value={job}
        choices={catalog.map((candidate) => [candidate.job, candidate.job] as const)}
        onChange={(chosen) => {
          setJob(chosen);
          setValues({});
          setFieldErrors({});
        }}
      />
      <SelectField
        label="Team"
        error={errorOf("team")}
        value={team}
        choices={named(teams)}
        onChange={(chosen) => {
          setTeam(chosen);
          setCluster("");
          setServiceAccount("");
        }}
      />
      <SelectField
        label="Cluster"
        error={errorOf("cluster")}
        value={cluster}
        choices={named(teamClusters)}
        emptyLabel="Choose…"
        onChange={setCluster}
      />
      <SelectField
        label="Service account"
        hint="The job reads and writes as this account; SASL clusters need one."
        error={errorOf("service_account")}
        value={serviceAccount}
        choices={named(accounts.data ?? [])}
        emptyLabel="None"
        onChange={setServiceAccount}
      />
      <Field
        label="Service account password"
        hint={
          streaming
            ? "Its SCRAM password on the cluster; kept encrypted while the job should run, never shown again."
            : "Its SCRAM password on the cluster; used for this run only and never shown again."
        }
        error={errorOf("password")}
      >
        {(control) => (
          <input
            {...control}
            className="input"
            type="password"
            autoComplete="off"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        )}
      </Field>

      <fieldset className="launch-form__parameters">
        <legend className="field__label">Parameters of {job}</legend>
        {fields.map((field) => (
          <ParameterInput
            key={`${job}:${field.path}`}
            field={field}
            value={values[field.path] ?? ""}
            error={fieldErrors[field.path]}
            onChange={(value) => setValues((current) => ({ ...current, [field.path]: value }))}
          />
        ))}
      </fieldset>

      <details className="launch-form__advanced">
        <summary>{streaming ? "Compute" : "Compute and limits"}</summary>
        {streaming ? null : (
          <Field label="Time limit (seconds)" error={errorOf("time_limit_seconds")}>
            {(control) => (
              <input
                {...control}
                className="input"
                type="number"
                min={10}
                value={timeLimit}
                onChange={(event) => setTimeLimit(event.target.value)}
              />
            )}
          </Field>
        )}
        <Field
          label="Compute target"
          hint="local[N], spark://…, k8s://… or sc://…; blank for the default."
          error={errorOf("compute_target")}
        >
          {(control) => (
            <input
              {...control}
              className="input mono"
              value={computeTarget}
              onChange={(event) => setComputeTarget(event.target.value)}
            />
          )}
        </Field>
      </details>

      <FormError message={serverErrors.fields.parameters ?? serverErrors.form} />
      <div className="dialog__actions">
        <button type="submit" className="button button--primary" disabled={launch.isPending}>
          {streaming
            ? launch.isPending
              ? "Creating…"
              : "Create and start"
            : launch.isPending
              ? "Launching…"
              : "Launch"}
        </button>
      </div>
    </form>
  );
}

function ParameterInput({
  field,
  value,
  error,
  onChange,
}: {
  field: ParameterField;
  value: string;
  error: string | undefined;
  onChange: (value: string) => void;
}) {
  const label = field.required ? `${field.label} (required)` : field.label;
  return (
    <Field label={label} hint={field.hint ?? (field.required ? undefined : "Blank: the job's default.")} error={error}>
      {(control) => {
        if (field.kind === "boolean") {
          return (
            <select {...control} className="input" value={value} onChange={(event) => onChange(event.target.value)}>
              <option value="">Default</option>
              <option value="true">Yes</option>
              <option value="false">No</option>
            </select>
          );
        }
        if (field.multiline) {
          return (
            <textarea
              {...control}
              className="input mono"
              rows={4}
              value={value}
              onChange={(event) => onChange(event.target.value)}
            />
          );
        }
        const type =
          field.kind === "integer" || field.kind === "number"
            ? "number"
            : field.kind === "timestamp"
              ? "datetime-local"
              : "text";
        return (
          <input
            {...control}
            className={field.kind === "json" || field.kind === "text" ? "input mono" : "input"}
            type={type}
            step={field.kind === "number" ? "any" : field.kind === "timestamp" ? 1 : undefined}
            value={value}
            onChange={(event) => onChange(event.target.value)}
          />
        );
      }}
    </Field>
  );
}
