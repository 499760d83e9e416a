import { useState, type FormEvent } from "react";

import { useApplyTemplate } from "../../api/hooks/acls";
import { usePrefixes } from "../../api/hooks/prefixes";
import type { Cluster, ServiceAccount } from "../../api/types";
import { Field, FormActions, FormError } from "../../components/Field";
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
  const server = formErrorsOf(apply.error, ["service_account", "cluster", "template", "topic_prefix", "group_prefix"]);
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
      },
      { onSuccess: onDone },
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <Field label="Service account" error={server.fields.service_account}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={accountId}
            onChange={(event) => {
              setAccountId(Number(event.target.value));
              setTopicPrefix(null);
              setGroupPrefix(null);
            }}
          >
            {accounts.map((option) => (
              <option key={option.id} value={option.id}>
                {option.name}
              </option>
            ))}
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
      <Field label="Template" error={server.fields.template}>
        {(control) => (
          <select
            {...control}
            className="input"
            value={template}
            onChange={(event) => setTemplate(event.target.value as TemplateName)}
          >
            {(Object.keys(TEMPLATES) as TemplateName[]).map((name) => (
              <option key={name} value={name}>
                {TEMPLATES[name].label}
              </option>
            ))}
          </select>
        )}
      </Field>
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
      <Field
        label="Topic prefix"
        hint="Bindings are PREFIXED: every topic starting with this."
        error={server.fields.topic_prefix}
      >
        {(control) => (
          <input
            {...control}
            className="input mono"
            autoComplete="off"
            value={topicPrefix ?? teamPrefix("topic")}
            onChange={(event) => setTopicPrefix(event.target.value)}
          />
        )}
      </Field>
      {description.needsGroupPrefix ? (
        <Field label="Group prefix" error={server.fields.group_prefix}>
          {(control) => (
            <input
              {...control}
              className="input mono"
              autoComplete="off"
              value={groupPrefix ?? teamPrefix("group")}
              onChange={(event) => setGroupPrefix(event.target.value)}
            />
          )}
        </Field>
      ) : null}
      <FormError message={server.form} />
      <FormActions submitLabel="Grant access" pending={apply.isPending} onCancel={onDone} />
    </form>
  );
}
