import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";

import { useTeamPolicy } from "../../api/hooks/policies";
import { usePrefixes } from "../../api/hooks/prefixes";
import { useCreateTopic } from "../../api/hooks/topics";
import type { Cluster, Team, TopicCreate } from "../../api/types";
import { Field, FormError } from "../../components/Field";
import { choicesOf, SelectField, TextField } from "../../components/FormFields";
import { formatBytes } from "../../lib/bytes";
import { formErrorsOf } from "../../lib/formErrors";
import { formatDurationMs } from "../../lib/time";
import { LiveOperation } from "../clusters/OperationProgress";
import { KeyValueRows, rowsToRecord, type KeyValueRow } from "./KeyValueRows";

/** The cluster's guardrail: partition replicas its brokers may carry, and how many are in use. */
export function budgetHint(cluster: Cluster | undefined): string | undefined {
  const budget = cluster?.partition_budget;
  if (!budget) return undefined;
  return (
    `${budget.used_replicas.toLocaleString()} of ${budget.max_replicas.toLocaleString()} partition replicas in use ` +
    `(${budget.per_broker.toLocaleString()} per broker on ${budget.brokers}); a topic needs partitions × replication factor.`
  );
}

/** Kafka's own rule for topic names. */
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;

interface CreateTopicFormProps {
  teams: Team[];
  clusters: Cluster[];
  initialCluster?: number;
  /** The team the form starts with (the team page's own, the list's team filter). */
  initialTeam?: number;
  /** Teams the person is a member of, as opposed to those an org admin may act for. */
  memberOf?: ReadonlySet<number>;
  onCancel: () => void;
}

function newestFirst(a: Team, b: Team): number {
  return Date.parse(b.created_at) - Date.parse(a.created_at) || b.id - a.id;
}

/**
 * The team a new topic most likely belongs to: the one asked for, else the newest of the person's own
 * teams, else the newest team they may create topics for (an org admin who just created a team goes on
 * to give it a topic). Never merely the alphabetically first.
 */
export function preferredTeam(teams: readonly Team[], memberOf: ReadonlySet<number>, initialTeam?: number) {
  if (teams.some((team) => team.id === initialTeam)) return initialTeam;
  const own = teams.filter((team) => memberOf.has(team.id));
  return [...(own.length > 0 ? own : teams)].sort(newestFirst)[0]?.id;
}

/**
 * A new topic for one of the person's teams. "Validate" asks the cluster to
 * check the request without creating anything; "Create" creates it. Hints
 * show the team's prefixes and policy limits before the server enforces them.
 */
export function CreateTopicForm({
  teams,
  clusters,
  initialCluster,
  initialTeam,
  memberOf = new Set(),
  onCancel,
}: CreateTopicFormProps) {
  const navigate = useNavigate();
  const create = useCreateTopic();
  const [team, setTeam] = useState<number | "">(() => preferredTeam(teams, memberOf, initialTeam) ?? "");
  const sameOrganization = clusters.filter(
    (cluster) => cluster.organization === teams.find((each) => each.id === team)?.organization,
  );
  const [cluster, setCluster] = useState<number | "">(
    clusters.some((each) => each.id === initialCluster) ? (initialCluster ?? "") : (clusters[0]?.id ?? ""),
  );
  const [name, setName] = useState("");
  const [partitions, setPartitions] = useState("3");
  // Empty: the cluster's default (3 on a cluster of three or more brokers, with min.insync.replicas 2).
  const [replicationFactor, setReplicationFactor] = useState("");
  const [configs, setConfigs] = useState<KeyValueRow[]>([]);
  const [nameError, setNameError] = useState<string | undefined>();
  const [validated, setValidated] = useState<string | null>(null);
  // Set when the cluster did not confirm the creation in time: the form follows the operation instead.
  const [confirming, setConfirming] = useState<number | null>(null);

  const policy = useTeamPolicy(typeof team === "number" ? team : 0);
  const prefixes = usePrefixes(typeof team === "number" ? team : undefined);
  const topicPrefixes = (prefixes.data ?? [])
    .filter((prefix) => prefix.resource_type === "topic")
    .map((prefix) => prefix.prefix);
  // The guardrails in force for the team: its policy's limits, the defaults where it sets none.
  const limits = policy.data?.effective_limits;
  const maxPartitions = limits?.max_partitions_per_topic ?? policy.data?.max_partitions_per_topic ?? null;
  const server = formErrorsOf(create.error, ["cluster", "team", "name", "partitions", "replication_factor", "configs"]);
  const clusterChoices = sameOrganization.length > 0 ? sameOrganization : clusters;
  // A team's topics live on its organization's clusters; the choice follows a change of team.
  const chosenCluster = clusterChoices.some((each) => each.id === cluster) ? cluster : (clusterChoices[0]?.id ?? "");

  function request(validateOnly: boolean): TopicCreate | null {
    if (!TOPIC_NAME.test(name) || name === "." || name === "..") {
      setNameError("1 to 249 letters, digits, '.', '_' or '-'.");
      return null;
    }
    if (topicPrefixes.length > 0 && !topicPrefixes.some((prefix) => name.startsWith(prefix))) {
      setNameError(`The name must start with one of the team's prefixes: ${topicPrefixes.join(", ")}`);
      return null;
    }
    setNameError(undefined);
    if (team === "" || chosenCluster === "") return null;
    return {
      team,
      cluster: chosenCluster,
      name,
      partitions: Number(partitions),
      ...(replicationFactor === "" ? {} : { replication_factor: Number(replicationFactor) }),
      configs: rowsToRecord(configs),
      validate_only: validateOnly,
    };
  }

  function send(validateOnly: boolean) {
    const body = request(validateOnly);
    if (!body) return;
    setValidated(null);
    create.mutate(body, {
      onSuccess: (result) => {
        if (result.validated) {
          setValidated(`The cluster accepts ${name} with ${partitions} partitions. Nothing was created yet.`);
        } else if ("operation" in result) {
          setConfirming(result.operation.id);
        } else {
          navigate(`/topics/${result.topic.id}`);
        }
      },
    });
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    send(false);
  }

  if (confirming !== null) {
    return (
      <div>
        <p className="callout" role="status">
          The cluster did not confirm {name} in time. The control plane is reading the cluster back and records the
          outcome here once it has seen it.
        </p>
        <LiveOperation id={confirming} />
        <div className="dialog__actions">
          <button type="button" className="button" onClick={onCancel}>
            Close
          </button>
        </div>
      </div>
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <SelectField
        label="Team"
        value={team}
        choices={choicesOf(teams)}
        onChange={(chosen) => {
          setTeam(chosen);
          setValidated(null);
        }}
        error={server.fields.team}
      />
      <SelectField
        label="Cluster"
        hint={budgetHint(clusterChoices.find((each) => each.id === chosenCluster))}
        value={chosenCluster}
        choices={choicesOf(clusterChoices)}
        onChange={setCluster}
        error={server.fields.cluster}
      />
      <TextField
        label="Name"
        hint={
          topicPrefixes.length > 0
            ? `Starts with the team's prefix: ${topicPrefixes.join(", ")}`
            : "The team has no topic prefix yet; an admin adds one on the team page."
        }
        placeholder={topicPrefixes[0] ? `${topicPrefixes[0]}orders` : undefined}
        value={name}
        onChange={(typed) => {
          setName(typed);
          setValidated(null);
        }}
        error={nameError ?? server.fields.name}
      />
      <div className="inline-form">
        <Field
          label="Partitions"
          hint={
            maxPartitions !== null
              ? `Up to ${maxPartitions} per topic${limits ? `, ${limits.max_total_partitions} for the team` : ""}.`
              : undefined
          }
          error={server.fields.partitions}
        >
          {(control) => (
            <input
              {...control}
              className="input"
              type="number"
              min={1}
              max={maxPartitions ?? undefined}
              value={partitions}
              onChange={(event) => setPartitions(event.target.value)}
            />
          )}
        </Field>
        <Field
          label="Replication factor"
          hint={
            limits ? `At most ${limits.max_replication_factor}, and no more than the cluster's brokers.` : undefined
          }
          error={server.fields.replication_factor}
        >
          {(control) => (
            <input
              {...control}
              className="input"
              type="number"
              min={1}
              max={limits?.max_replication_factor ?? 32}
              placeholder="cluster default"
              value={replicationFactor}
              onChange={(event) => setReplicationFactor(event.target.value)}
            />
          )}
        </Field>
      </div>
      {limits ? (
        <p className="field__hint" aria-label="Guardrails">
          retention.ms at most {formatDurationMs(limits.max_retention_ms)}; segment.bytes{" "}
          {formatBytes(limits.min_segment_bytes)} to {formatBytes(limits.max_segment_bytes)}; segment.ms at least{" "}
          {formatDurationMs(limits.min_segment_ms)}; {limits.admin_operations_per_minute} changes per minute for the
          team. An org admin can raise these in the team&apos;s policy.
        </p>
      ) : null}
      <KeyValueRows
        legend="Config overrides"
        keyLabel="Config"
        valueLabel="Value"
        rows={configs}
        onChange={setConfigs}
        keyPlaceholder="retention.ms"
      />
      {server.fields.configs ? <p className="field__error">{server.fields.configs}</p> : null}
      <FormError message={server.form} />
      {validated ? (
        <p className="callout" role="status">
          {validated}
        </p>
      ) : null}
      <div className="dialog__actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="button" disabled={create.isPending} onClick={() => send(true)}>
          Validate
        </button>
        <button type="submit" className="button button--primary" disabled={create.isPending}>
          Create topic
        </button>
      </div>
    </form>
  );
}
