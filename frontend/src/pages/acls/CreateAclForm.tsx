import { useState, type FormEvent } from "react";

import { useCreateAclBinding } from "../../api/hooks/acls";
import type { AclBinding, AclBindingCreate, Cluster, ServiceAccount, Team } from "../../api/types";
import { Field, FormActions, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";
import { OPERATIONS, PATTERN_TYPES, PERMISSIONS, RESOURCE_TYPES } from "./aclChoices";

interface CreateAclFormProps {
  accounts: ServiceAccount[];
  teams: Team[];
  clusters: Cluster[];
  /** Clusters whose org admin the person is: they may bind any principal there, for no team. */
  administeredClusters: Cluster[];
  onDone: () => void;
}

/** One binding in Kafka's terms. Teams bind their own accounts inside their prefixes; the API checks. */
export function CreateAclForm({ accounts, teams, clusters, administeredClusters, onDone }: CreateAclFormProps) {
  const create = useCreateAclBinding();
  const [team, setTeam] = useState<number | "">(teams[0]?.id ?? "");
  const organization = teams.find((each) => each.id === team)?.organization;
  const clusterChoices =
    team === "" ? administeredClusters : clusters.filter((cluster) => cluster.organization === organization);
  const [clusterId, setClusterId] = useState<number | "">("");
  const chosenCluster = clusterChoices.some((each) => each.id === clusterId)
    ? clusterId
    : (clusterChoices[0]?.id ?? "");
  const teamAccounts = accounts.filter((account) => team === "" || account.team === team);
  const [principal, setPrincipal] = useState(teamAccounts[0]?.principal ?? "User:");
  const [resourceType, setResourceType] = useState<AclBinding["resource_type"]>("TOPIC");
  const [resourceName, setResourceName] = useState("");
  const [patternType, setPatternType] = useState<AclBinding["pattern_type"]>("PREFIXED");
  const [operation, setOperation] = useState<AclBinding["operation"]>("READ");
  const [permission, setPermission] = useState<NonNullable<AclBinding["permission"]>>("ALLOW");
  const server = formErrorsOf(create.error, [
    "cluster",
    "team",
    "principal",
    "resource_type",
    "resource_name",
    "pattern_type",
    "operation",
    "permission",
  ]);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (chosenCluster === "") return;
    const body: AclBindingCreate = {
      cluster: chosenCluster,
      team: team === "" ? null : team,
      principal,
      host: "*",
      resource_type: resourceType,
      resource_name: resourceName,
      pattern_type: patternType,
      operation,
      permission,
    };
    create.mutate(body, { onSuccess: onDone });
  }

  return (
    <form onSubmit={submit} noValidate>
      <Field label="Team" error={server.fields.team}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={team}
            onChange={(event) => setTeam(event.target.value ? Number(event.target.value) : "")}
          >
            {teams.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
            {administeredClusters.length > 0 ? <option value="">No team (organization-wide)</option> : null}
          </select>
        )}
      </Field>
      <Field label="Cluster" error={server.fields.cluster}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={chosenCluster}
            onChange={(event) => setClusterId(Number(event.target.value))}
          >
            {clusterChoices.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Principal" hint="User:<service account name>" error={server.fields.principal}>
        {(control) => (
          <input
            {...control}
            className="input mono"
            list="acl-principals"
            autoComplete="off"
            value={principal}
            onChange={(event) => setPrincipal(event.target.value)}
          />
        )}
      </Field>
      <datalist id="acl-principals">
        {teamAccounts.map((account) => (
          <option key={account.id} value={account.principal} />
        ))}
      </datalist>
      <div className="inline-form">
        <Field label="Resource type" error={server.fields.resource_type}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={resourceType}
              onChange={(event) => setResourceType(event.target.value as AclBinding["resource_type"])}
            >
              {RESOURCE_TYPES.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Pattern" error={server.fields.pattern_type}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={patternType}
              onChange={(event) => setPatternType(event.target.value as AclBinding["pattern_type"])}
            >
              {PATTERN_TYPES.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label="Resource name" error={server.fields.resource_name}>
        {(control) => (
          <input
            {...control}
            className="input mono"
            autoComplete="off"
            value={resourceName}
            onChange={(event) => setResourceName(event.target.value)}
          />
        )}
      </Field>
      <div className="inline-form">
        <Field label="Operation" error={server.fields.operation}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={operation}
              onChange={(event) => setOperation(event.target.value as AclBinding["operation"])}
            >
              {OPERATIONS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Permission" error={server.fields.permission}>
          {(control) => (
            <select
              {...control}
              className="input"
              value={permission}
              onChange={(event) => setPermission(event.target.value as NonNullable<AclBinding["permission"]>)}
            >
              {PERMISSIONS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <FormError message={server.form} />
      <FormActions submitLabel="Create binding" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}
