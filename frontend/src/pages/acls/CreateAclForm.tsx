import { useState, type FormEvent } from "react";

import { useCreateAclBinding } from "../../api/hooks/acls";
import type { AclBinding, AclBindingCreate, Cluster, ServiceAccount, Team } from "../../api/types";
import { FormActions, FormError } from "../../components/Field";
import { choicesOf, SelectField, TextField } from "../../components/FormFields";
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
      <SelectField
        label="Team"
        value={team}
        choices={choicesOf(teams)}
        onChange={setTeam}
        emptyLabel={administeredClusters.length > 0 ? "No team (organization-wide)" : undefined}
        error={server.fields.team}
      />
      <SelectField
        label="Cluster"
        value={chosenCluster}
        choices={choicesOf(clusterChoices)}
        onChange={setClusterId}
        error={server.fields.cluster}
      />
      <TextField
        label="Principal"
        hint="User:<service account name>"
        list="acl-principals"
        value={principal}
        onChange={setPrincipal}
        error={server.fields.principal}
      />
      <datalist id="acl-principals">
        {teamAccounts.map((account) => (
          <option key={account.id} value={account.principal} />
        ))}
      </datalist>
      <div className="inline-form">
        <SelectField
          label="Resource type"
          value={resourceType}
          choices={RESOURCE_TYPES}
          onChange={setResourceType}
          error={server.fields.resource_type}
        />
        <SelectField
          label="Pattern"
          value={patternType}
          choices={PATTERN_TYPES}
          onChange={setPatternType}
          error={server.fields.pattern_type}
        />
      </div>
      <TextField
        label="Resource name"
        value={resourceName}
        onChange={setResourceName}
        error={server.fields.resource_name}
      />
      <div className="inline-form">
        <SelectField
          label="Operation"
          value={operation}
          choices={OPERATIONS}
          onChange={setOperation}
          error={server.fields.operation}
        />
        <SelectField
          label="Permission"
          value={permission}
          choices={PERMISSIONS}
          onChange={setPermission}
          error={server.fields.permission}
        />
      </div>
      <FormError message={server.form} />
      <FormActions submitLabel="Create binding" pending={create.isPending} onCancel={onDone} />
    </form>
  );
}
