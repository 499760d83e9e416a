import { createColumnHelper } from "@tanstack/react-table";
import { useEffect, useMemo, useState } from "react";
import { Link } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import { useAccessGrants, useAclBindings, useDeleteAclBinding, useRevokeGrant } from "../api/hooks/acls";
import { useClusters } from "../api/hooks/clusters";
import { useServiceAccounts } from "../api/hooks/serviceAccounts";
import { useTeams } from "../api/hooks/teams";
import type { AccessGrant, AclBinding, Cluster, ServiceAccount, Team } from "../api/types";
import { can, isOrgAdmin, roleInTeam, type Access } from "../auth/permissions";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { DataTable } from "../components/DataTable";
import { Dialog } from "../components/Dialog";
import { SelectField, TextField, type Choice } from "../components/FormFields";
import { PageHeader } from "../components/PageHeader";
import { EmptyState, LoadingState, QueryView } from "../components/states";
import { useConfirmedAction } from "../components/useConfirmedAction";
import { useUrlFilters } from "../lib/useUrlFilters";
import { ApplyTemplateForm } from "./acls/ApplyTemplateForm";
import { CreateAclForm } from "./acls/CreateAclForm";
import { labelOf, OPERATIONS, PATTERN_TYPES, PERMISSIONS, RESOURCE_TYPES, TEMPLATES } from "./acls/aclChoices";

const FILTERS = ["principal", "type", "name", "pattern", "operation", "permission", "cluster"] as const;
type AclFilters = Record<(typeof FILTERS)[number], string>;

/** Bindings matching every filter set: text filters match anywhere, choices exactly. */
export function filterBindings(bindings: readonly AclBinding[], filters: AclFilters): AclBinding[] {
  const principal = filters.principal.toLowerCase();
  const name = filters.name.toLowerCase();
  return bindings.filter(
    (binding) =>
      (!principal || binding.principal.toLowerCase().includes(principal)) &&
      (!name || binding.resource_name.toLowerCase().includes(name)) &&
      (!filters.type || binding.resource_type === filters.type) &&
      (!filters.pattern || binding.pattern_type === filters.pattern) &&
      (!filters.operation || binding.operation === filters.operation) &&
      (!filters.permission || (binding.permission ?? "ALLOW") === filters.permission) &&
      (!filters.cluster || String(binding.cluster) === filters.cluster),
  );
}

/** Who may change a row: its team's developers, or the cluster's org admins for team-less rows. */
function mayChange(access: Access, teamId: number | null | undefined, teams: Team[], cluster: Cluster | undefined) {
  const team = teams.find((each) => each.id === teamId);
  if (team) return can.manageAccess(roleInTeam(access, team));
  return cluster !== undefined && isOrgAdmin(access, cluster.organization);
}

type Creating = "template" | "acl" | null;

export function AclsPage() {
  const [filters, setFilters] = useUrlFilters(FILTERS);
  const [accountParam] = useUrlFilters(["account"] as const);
  const bindings = useAclBindings();
  const grants = useAccessGrants();
  const clusters = useClusters();
  const teams = useTeams();
  const accounts = useServiceAccounts();
  const access = useAccess();
  const [creating, setCreating] = useState<Creating>(accountParam.account ? "template" : null);

  const manageableAccounts = useMemo(() => {
    if (!access.data || !teams.data || !accounts.data) return [];
    const accessData = access.data;
    const manageable = new Set(
      teams.data.filter((team) => can.manageAccess(roleInTeam(accessData, team))).map((team) => team.id),
    );
    return accounts.data.filter((account) => manageable.has(account.team));
  }, [access.data, teams.data, accounts.data]);
  const administeredClusters = (clusters.data ?? []).filter(
    (cluster) => access.data && isOrgAdmin(access.data, cluster.organization),
  );

  return (
    <>
      <PageHeader
        title="ACLs"
        description="Who may do what on each cluster: bindings in Kafka's model, and grants made from templates."
        actions={
          <>
            {manageableAccounts.length > 0 ? (
              <button type="button" className="button button--primary" onClick={() => setCreating("template")}>
                Grant access from a template
              </button>
            ) : null}
            {manageableAccounts.length > 0 || administeredClusters.length > 0 ? (
              <button type="button" className="button" onClick={() => setCreating("acl")}>
                New ACL binding
              </button>
            ) : null}
          </>
        }
      />
      <QueryView
        query={combineQueries(bindings, grants, clusters, teams, accounts, access)}
        errorTitle="Could not load the ACLs"
      >
        {([bindingList, grantList, clusterList, teamList, accountList, accessData]) => (
          <>
            <BindingFilters filters={filters} setFilters={setFilters} clusters={clusterList} />
            <BindingsTable
              bindings={filterBindings(bindingList, filters)}
              total={bindingList.length}
              grants={grantList}
              clusters={clusterList}
              teams={teamList}
              access={accessData}
            />
            <GrantsSection
              grants={grantList}
              clusters={clusterList}
              teams={teamList}
              accounts={accountList}
              access={accessData}
            />
          </>
        )}
      </QueryView>
      <Dialog open={creating === "template"} title="Grant access from a template" onClose={() => setCreating(null)}>
        {/* A deep link opens this before the lists arrive; the form starts once they have. */}
        {accounts.data && teams.data && access.data && clusters.data ? (
          manageableAccounts.length > 0 ? (
            <ApplyTemplateForm
              accounts={manageableAccounts}
              clusters={clusters.data}
              initialAccount={Number(accountParam.account) || undefined}
              onDone={() => setCreating(null)}
            />
          ) : (
            <EmptyState title="No service accounts you may grant access to" />
          )
        ) : (
          <LoadingState />
        )}
      </Dialog>
      <Dialog open={creating === "acl"} title="New ACL binding" onClose={() => setCreating(null)}>
        <CreateAclForm
          accounts={manageableAccounts}
          teams={(teams.data ?? []).filter((team) => access.data && can.manageAccess(roleInTeam(access.data, team)))}
          clusters={clusters.data ?? []}
          administeredClusters={administeredClusters}
          onDone={() => setCreating(null)}
        />
      </Dialog>
    </>
  );
}

function ChoiceFilter({
  label,
  value,
  choices,
  onChange,
}: {
  label: string;
  value: string;
  choices: readonly Choice<string>[];
  onChange: (value: string) => void;
}) {
  return <SelectField label={label} value={value} choices={choices} emptyLabel="Any" onChange={onChange} />;
}

/** How long the URL waits for typing to pause before it records a text filter. */
const TYPING_PAUSE_MS = 250;

/**
 * A text filter that owns what is typed and hands it to the URL once typing
 * pauses: URL changes render as transitions, and an input fed from them
 * would drop keystrokes.
 */
function TextFilter({ label, value, onChange }: { label: string; value: string; onChange: (value: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => {
    if (text === value) return;
    const timer = window.setTimeout(() => onChange(text), TYPING_PAUSE_MS);
    return () => window.clearTimeout(timer);
  }, [text, value, onChange]);
  return <TextField label={label} mono={false} value={text} onChange={setText} />;
}

function BindingFilters({
  filters,
  setFilters,
  clusters,
}: {
  filters: AclFilters;
  setFilters: (changes: Partial<AclFilters>) => void;
  clusters: Cluster[];
}) {
  return (
    <div className="inline-form filters" role="group" aria-label="Filter ACL bindings">
      <TextFilter label="Principal" value={filters.principal} onChange={(principal) => setFilters({ principal })} />
      <ChoiceFilter
        label="Resource type"
        value={filters.type}
        choices={RESOURCE_TYPES}
        onChange={(type) => setFilters({ type })}
      />
      <TextFilter label="Resource name" value={filters.name} onChange={(name) => setFilters({ name })} />
      <ChoiceFilter
        label="Pattern"
        value={filters.pattern}
        choices={PATTERN_TYPES}
        onChange={(pattern) => setFilters({ pattern })}
      />
      <ChoiceFilter
        label="Operation"
        value={filters.operation}
        choices={OPERATIONS}
        onChange={(operation) => setFilters({ operation })}
      />
      <ChoiceFilter
        label="Permission"
        value={filters.permission}
        choices={PERMISSIONS}
        onChange={(permission) => setFilters({ permission })}
      />
      <ChoiceFilter
        label="Cluster"
        value={filters.cluster}
        choices={clusters.map((cluster) => [String(cluster.id), cluster.name] as const)}
        onChange={(cluster) => setFilters({ cluster })}
      />
    </div>
  );
}

const bindingColumn = createColumnHelper<AclBinding>();

function BindingsTable({
  bindings,
  total,
  grants,
  clusters,
  teams,
  access,
}: {
  bindings: AclBinding[];
  total: number;
  grants: AccessGrant[];
  clusters: Cluster[];
  teams: Team[];
  access: Access;
}) {
  const removal = useConfirmedAction(useDeleteAclBinding(), (binding: AclBinding) => binding.id);
  const clusterById = new Map(clusters.map((cluster) => [cluster.id, cluster]));
  const teamNames = new Map(teams.map((team) => [team.id, team.name]));
  const grantById = new Map(grants.map((grant) => [grant.id, grant]));

  const columns = [
    bindingColumn.accessor("principal", {
      header: "Principal",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    bindingColumn.accessor("resource_type", {
      header: "Resource type",
      cell: (info) => labelOf(RESOURCE_TYPES, info.getValue()),
    }),
    bindingColumn.accessor("resource_name", {
      header: "Resource",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    bindingColumn.accessor("pattern_type", {
      header: "Pattern",
      cell: (info) => labelOf(PATTERN_TYPES, info.getValue()),
    }),
    bindingColumn.accessor("operation", { header: "Operation", cell: (info) => labelOf(OPERATIONS, info.getValue()) }),
    bindingColumn.accessor((row) => row.permission ?? "ALLOW", {
      id: "permission",
      header: "Permission",
      cell: (info) => (
        <span className={info.getValue() === "DENY" ? "badge badge--danger" : "badge badge--ok"}>
          {labelOf(PERMISSIONS, info.getValue())}
        </span>
      ),
    }),
    bindingColumn.accessor((row) => clusterById.get(row.cluster)?.name ?? String(row.cluster), {
      id: "cluster",
      header: "Cluster",
    }),
    bindingColumn.accessor((row) => (row.team != null ? (teamNames.get(row.team) ?? "—") : "Organization"), {
      id: "team",
      header: "Team",
    }),
    bindingColumn.accessor(
      (row) => {
        if (!row.managed) return "unmanaged";
        const grant = row.grant != null ? grantById.get(row.grant) : undefined;
        return grant ? `${TEMPLATES[grant.template].label} grant` : "binding";
      },
      { id: "source", header: "Source" },
    ),
    bindingColumn.display({
      id: "actions",
      header: () => <span className="visually-hidden">Actions</span>,
      cell: (info) => {
        const binding = info.row.original;
        if (binding.grant != null || !mayChange(access, binding.team, teams, clusterById.get(binding.cluster))) {
          return null;
        }
        return (
          <button
            type="button"
            className="button button--danger"
            aria-label={`Delete ${binding.operation} on ${binding.resource_name} for ${binding.principal}`}
            onClick={() => removal.ask(binding)}
          >
            Delete
          </button>
        );
      },
    }),
  ];

  return (
    <section className="section" aria-labelledby="bindings-heading">
      <h2 id="bindings-heading" className="section__title">
        Bindings
      </h2>
      <p className="muted" role="status">
        {bindings.length === total ? `${total} bindings` : `${bindings.length} of ${total} bindings`}
      </p>
      {total === 0 ? (
        <EmptyState title="No ACL bindings yet" description="Grant a service account access from a template." />
      ) : bindings.length === 0 ? (
        <EmptyState title="No bindings match" description="Change or clear the filters." />
      ) : (
        <DataTable
          label="ACL bindings"
          columns={columns}
          rows={bindings}
          getRowId={(row) => String(row.id)}
          filterable={false}
          pagination={{ pageSize: 50 }}
        />
      )}
      <ConfirmDialog
        {...removal.dialog}
        title="Delete this ACL binding?"
        description={
          removal.target
            ? `${removal.target.principal} loses ${removal.target.operation} on ${removal.target.resource_type} ${removal.target.resource_name}.`
            : undefined
        }
        confirmationText={removal.target?.resource_name ?? ""}
      />
    </section>
  );
}

const grantColumn = createColumnHelper<AccessGrant>();

function GrantsSection({
  grants,
  clusters,
  teams,
  accounts,
  access,
}: {
  grants: AccessGrant[];
  clusters: Cluster[];
  teams: Team[];
  accounts: ServiceAccount[];
  access: Access;
}) {
  const revocation = useConfirmedAction(useRevokeGrant(), (grant: AccessGrant) => grant.id);
  const clusterById = new Map(clusters.map((cluster) => [cluster.id, cluster]));
  const accountById = new Map(accounts.map((account) => [account.id, account]));
  const accountName = (grant: AccessGrant) =>
    accountById.get(grant.service_account)?.name ?? `#${grant.service_account}`;

  const columns = [
    grantColumn.accessor((row) => accountName(row), {
      id: "account",
      header: "Service account",
      cell: (info) => <Link to={`/service-accounts/${info.row.original.service_account}`}>{info.getValue()}</Link>,
    }),
    grantColumn.accessor((row) => TEMPLATES[row.template].label, { id: "template", header: "Template" }),
    grantColumn.accessor("topic_prefix", {
      header: "Topic prefix",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    grantColumn.accessor((row) => row.group_prefix || "—", {
      id: "group_prefix",
      header: "Group prefix",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    grantColumn.accessor((row) => clusterById.get(row.cluster)?.name ?? String(row.cluster), {
      id: "cluster",
      header: "Cluster",
    }),
    grantColumn.accessor((row) => row.bindings.length, { id: "bindings", header: "Bindings" }),
    grantColumn.display({
      id: "actions",
      header: () => <span className="visually-hidden">Actions</span>,
      cell: (info) => {
        const grant = info.row.original;
        if (!mayChange(access, grant.team, teams, clusterById.get(grant.cluster))) return null;
        return (
          <button
            type="button"
            className="button button--danger"
            aria-label={`Revoke ${TEMPLATES[grant.template].label} grant of ${accountName(grant)}`}
            onClick={() => revocation.ask(grant)}
          >
            Revoke
          </button>
        );
      },
    }),
  ];

  return (
    <section className="section" aria-labelledby="grants-heading">
      <h2 id="grants-heading" className="section__title">
        Grants from templates
      </h2>
      <DataTable
        label="Access grants"
        columns={columns}
        rows={grants}
        getRowId={(row) => String(row.id)}
        filterable={grants.length > 10}
        emptyTitle="No grants yet"
        emptyDescription="A grant applies a template (producer, consumer, stream application) to a service account."
      />
      <ConfirmDialog
        {...revocation.dialog}
        title="Revoke this grant?"
        description="Every binding the grant created is removed; applications using the account lose this access."
        confirmationText={revocation.target ? accountName(revocation.target) : ""}
        confirmLabel="Revoke"
      />
    </section>
  );
}
