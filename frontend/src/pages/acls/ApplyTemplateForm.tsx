import { useState, type FormEvent } from "react";

import { useApplyTemplate } from "../../api/hooks/acls";
import { usePrefixes } from "../../api/hooks/prefixes";
import type { Cluster, ServiceAccount } from "../../api/types";
import { FormActions, FormError } from "../../components/Field";
import { choicesOf, SelectField, TextField } from "../../components/FormFields";
import { formErrorsOf } from "../../lib/formErrors";
import { TEMPLATES, type TemplateName } from "./aclChoices";

interface ApplyTemplateFormProps {
  accounts: ServiceAccount[];
  clusters: Cluster[];
  initialAccount?: number;
  onDone: () => void;
}

/** Gives a service account a template's rights on a cluster, with the team's prefixes filled in. */
export function ApplyTemplateForm({ accounts, clusters, initialAccount, onDone }: ApplyTemplateFormProps) {
  const apply = useApplyTemplate();
  const [accountId, setAccountId] = useState<number | "">(
    accounts.some((each) => each.id === initialAccount) ? (initialAccount ?? "") : (accounts[0]?.id ?? ""),
  );
  const account = accounts.find((each) => each.id === accountId);
  const clusterChoices = clusters.filter((cluster) => cluster.organization === account?.organization);
  const [clusterId, setClusterId] = useState<number | "">("");
  const chosenCluster = clusterChoices.some((each) => each.id === clusterId)
    ? clusterId
    : (clusterChoices[0]?.id ?? "");
  const [template, setTemplate] = useState<TemplateName>("producer");
  const prefixes = usePrefixes(account?.team);
  const teamPrefix = (kind: string) => prefixes.data?.find((prefix) => prefix.resource_type === kind)?.prefix ?? "";
  // Until edited, the prefixes follow the chosen account's team.
  const [topicPrefix, setTopicPrefix] = useState<string | null>(null);
  const [groupPrefix, setGroupPrefix] = useState<string | null>(null);
  const [transactionalIdPrefix, setTransactionalIdPrefix] = useState<string | null>(null);
  const server = formErrorsOf(apply.error, [
    "service_account",
    "cluster",
    "template",
    "topic_prefix",
    "group_prefix",
    "transactional_id_prefix",
  ]);
  const description = TEMPLATES[template];

  function submit(event: FormEvent) {
    event.preventDefault();
    if (accountId === "" || chosenCluster === "") return;
    apply.mutate(
      {
        service_account: accountId,
        cluster: chosenCluster,
        template,
        topic_prefix: topicPrefix ?? teamPrefix("topic"),
        group_prefix: description.needsGroupPrefix ? (groupPrefix ?? teamPrefix("group")) : "",
        transactional_id_prefix: description.needsTransactionalIdPrefix
          ? (transactionalIdPrefix ?? teamPrefix("transactional_id"))
          : "",
      },
      { onSuccess: onDone },
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <SelectField
        label="Service account"
        value={accountId}
        choices={choicesOf(accounts)}
        onChange={(chosen) => {
          setAccountId(chosen);
          setTopicPrefix(null);
          setGroupPrefix(null);
          setTransactionalIdPrefix(null);
        }}
        error={server.fields.service_account}
      />
      <SelectField
        label="Cluster"
        value={chosenCluster}
        choices={choicesOf(clusterChoices)}
        onChange={setClusterId}
        error={server.fields.cluster}
      />
      <SelectField
        label="Template"
        value={template}
        choices={(Object.keys(TEMPLATES) as TemplateName[]).map((name) => [name, TEMPLATES[name].label] as const)}
        onChange={setTemplate}
        error={server.fields.template}
      />
      <div className="callout" aria-label="What the template grants">
        <p>
          {description.label} grants {account ? <span className="mono">{account.principal}</span> : "the account"}:
        </p>
        <ul>
          {description.grants.map((grant) => (
            <li key={grant}>{grant}</li>
          ))}
        </ul>
      </div>
      <TextField
        label="Topic prefix"
        hint="Bindings are PREFIXED: every topic starting with this."
        value={topicPrefix ?? teamPrefix("topic")}
        onChange={setTopicPrefix}
        error={server.fields.topic_prefix}
      />
      {description.needsGroupPrefix ? (
        <TextField
          label="Group prefix"
          value={groupPrefix ?? teamPrefix("group")}
          onChange={setGroupPrefix}
          error={server.fields.group_prefix}
        />
      ) : null}
      {description.needsTransactionalIdPrefix ? (
        <TextField
          label="Transactional id prefix"
          hint="The producer's transactional.id must start with this."
          value={transactionalIdPrefix ?? teamPrefix("transactional_id")}
          onChange={setTransactionalIdPrefix}
          error={server.fields.transactional_id_prefix}
        />
      ) : null}
      <FormError message={server.form} />
      <FormActions submitLabel="Grant access" pending={apply.isPending} onCancel={onDone} />
    </form>
  );
}
