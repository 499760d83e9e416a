import { useState, type FormEvent } from "react";
import { Link } from "react-router";

import { isFinished, useCreateCluster, useEngines, useOperation } from "../../api/hooks/clusters";
import type { AcceptedOperation, ClusterCreate, Organization } from "../../api/types";
import { Field, FormActions, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";
import { configProblemsByRow, duplicateKeys, rowsToConfig, type ConfigRow } from "./brokerConfigRows";
import { ClusterNameField, useClusterName } from "./ClusterNameField";
import { LiveOperation } from "./OperationProgress";
import { OrganizationField } from "./OrganizationField";

/** Local clusters have 1 to 9 brokers (MAX_LOCAL_BROKERS); new ones replicate over three by default. */
const MAX_LOCAL_BROKERS = 9;

interface CreateClusterFormProps {
  organizations: Organization[];
  onClose: () => void;
}

/**
 * A two-step wizard: the cluster's name, size and config overrides, then the
 * provisioning operation's live progress once the API accepted the request.
 */
export function CreateClusterForm({ organizations, onClose }: CreateClusterFormProps) {
  const [accepted, setAccepted] = useState<AcceptedOperation | null>(null);
  if (accepted) return <ProvisioningStep accepted={accepted} onClose={onClose} />;
  return <SpecStep organizations={organizations} onAccepted={setAccepted} onCancel={onClose} />;
}

function ProvisioningStep({ accepted, onClose }: { accepted: AcceptedOperation; onClose: () => void }) {
  const operation = useOperation(accepted.operation.id);
  const finished = operation.data ? isFinished(operation.data) : false;
  return (
    <div>
      <p>
        Cluster <strong className="mono">{accepted.cluster.name}</strong> was requested. You can close this window:
        provisioning carries on in the background.
      </p>
      <LiveOperation id={accepted.operation.id} />
      <div className="dialog__actions">
        <Link className="button" to={`/clusters/${accepted.cluster.id}`} onClick={onClose}>
          Open the cluster
        </Link>
        <button type="button" className="button button--primary" onClick={onClose}>
          {finished ? "Done" : "Close"}
        </button>
      </div>
    </div>
  );
}

interface SpecStepProps {
  organizations: Organization[];
  onAccepted: (accepted: AcceptedOperation) => void;
  onCancel: () => void;
}

function SpecStep({ organizations, onAccepted, onCancel }: SpecStepProps) {
  const create = useCreateCluster();
  const [organization, setOrganization] = useState<number | "">(organizations[0]?.id ?? "");
  const clusterName = useClusterName();
  const [brokerCount, setBrokerCount] = useState("3");
  const engines = useEngines();
  const [engine, setEngine] = useState<ClusterCreate["engine"]>("streamhub");
  const [engineVersion, setEngineVersion] = useState("");
  const chosenEngine = engines.data?.find((each) => each.engine === engine);
  const [rows, setRows] = useState<ConfigRow[]>([]);
  const server = formErrorsOf(create.error, [
    "organization",
    "name",
    "broker_count",
    "broker_config",
    "engine",
    "engine_version",
  ]);
  const problems = configProblemsByRow(create.error, rows);
  const duplicates = duplicateKeys(rows);
  const formMessage =
    problems.byRow.size > 0 || problems.unplaced.length > 0
      ? [create.error instanceof Error ? create.error.message : null, ...problems.unplaced].filter(Boolean).join(" ")
      : server.form;

  function updateRow(index: number, change: Partial<ConfigRow>) {
    setRows((current) => current.map((row, at) => (at === index ? { ...row, ...change } : row)));
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!clusterName.validate() || organization === "" || duplicates.size > 0) return;
    create.mutate(
      {
        organization,
        name: clusterName.name,
        broker_count: Number(brokerCount),
        broker_config: rowsToConfig(rows),
        port: 0,
        engine,
        engine_version: engine === "apache-kafka" ? engineVersion || (chosenEngine?.default_version ?? "") : "",
      },
      { onSuccess: onAccepted },
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <OrganizationField
        organizations={organizations}
        value={organization}
        onChange={setOrganization}
        error={server.fields.organization}
      />
      <ClusterNameField
        value={clusterName.name}
        onChange={clusterName.setName}
        error={clusterName.error ?? server.fields.name}
      />
      <Field
        label="Engine"
        hint="StreamHub runs our own broker; Apache Kafka runs Apache Kafka's own JVMs (512 MiB heap per node)."
        error={server.fields.engine}
      >
        {(control) => (
          <select
            {...control}
            className="input"
            value={engine}
            onChange={(event) => {
              setEngine(event.target.value as ClusterCreate["engine"]);
              setEngineVersion("");
            }}
          >
            <option value="streamhub">StreamHub broker</option>
            <option value="apache-kafka" disabled={engines.data !== undefined && !chosenVersions(engines.data).length}>
              Apache Kafka
            </option>
          </select>
        )}
      </Field>
      {engine === "apache-kafka" ? (
        <Field
          label="Apache Kafka version"
          hint="The versions installed on this host."
          error={server.fields.engine_version}
        >
          {(control) => (
            <select
              {...control}
              className="input"
              value={engineVersion || chosenEngine?.default_version || ""}
              onChange={(event) => setEngineVersion(event.target.value)}
            >
              {(chosenEngine?.versions ?? []).map((version) => (
                <option key={version} value={version}>
                  {version}
                  {version === chosenEngine?.default_version ? " (pinned)" : ""}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <Field
        label="Brokers"
        hint="One runs a single broker; two or more replicate (the first three also vote in the controller quorum; from three on, topics get 3 replicas with min.insync.replicas 2)."
        error={server.fields.broker_count}
      >
        {(control) => (
          <input
            {...control}
            className="input"
            type="number"
            min={1}
            max={MAX_LOCAL_BROKERS}
            value={brokerCount}
            onChange={(event) => setBrokerCount(event.target.value)}
          />
        )}
      </Field>
      <fieldset className="config-rows">
        <legend className="field__label">Broker config overrides</legend>
        {rows.length === 0 ? <p className="field__hint">None: the broker's defaults apply.</p> : null}
        {rows.map((row, index) => {
          const rowError = duplicates.has(index) ? `${row.key.trim()} is given twice.` : problems.byRow.get(index);
          const errorId = `config-row-${index}-error`;
          return (
            <div key={index} className="config-rows__row">
              <input
                className="input mono"
                aria-label={`Property ${index + 1}`}
                placeholder="num.partitions"
                aria-invalid={Boolean(rowError)}
                aria-describedby={rowError ? errorId : undefined}
                value={row.key}
                onChange={(event) => updateRow(index, { key: event.target.value })}
              />
              <input
                className="input mono"
                aria-label={`Value ${index + 1}`}
                placeholder="3"
                aria-invalid={Boolean(rowError)}
                aria-describedby={rowError ? errorId : undefined}
                value={row.value}
                onChange={(event) => updateRow(index, { value: event.target.value })}
              />
              <button
                type="button"
                className="button button--quiet"
                aria-label={`Remove override ${index + 1}`}
                onClick={() => setRows((current) => current.filter((_, at) => at !== index))}
              >
                ×
              </button>
              {rowError ? (
                <p id={errorId} className="field__error config-rows__error">
                  {rowError}
                </p>
              ) : null}
            </div>
          );
        })}
        {server.fields.broker_config ? <p className="field__error">{server.fields.broker_config}</p> : null}
        <button
          type="button"
          className="button"
          onClick={() => setRows((current) => [...current, { key: "", value: "" }])}
        >
          Add override
        </button>
      </fieldset>
      <FormError message={formMessage} />
      <FormActions submitLabel="Create cluster" pending={create.isPending} onCancel={onCancel} />
    </form>
  );
}

function chosenVersions(engines: { engine: string; versions: string[] }[]): string[] {
  return engines.find((each) => each.engine === "apache-kafka")?.versions ?? [];
}
