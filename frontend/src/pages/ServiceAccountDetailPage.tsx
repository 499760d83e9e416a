import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { describeError } from "../api/errors";
import { useAccess } from "../api/hooks/access";
import { useRevokeApiKey, useServiceAccountKeys } from "../api/hooks/apiKeys";
import { useDeleteServiceAccount, useServiceAccount } from "../api/hooks/serviceAccounts";
import { useTeams } from "../api/hooks/teams";
import type { ApiKey, ServiceAccount, TeamRole } from "../api/types";
import { can, grantableRoles, ROLE_LABELS, roleInTeam } from "../auth/permissions";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { DataTable } from "../components/DataTable";
import { PageHeader } from "../components/PageHeader";
import { SecretDialog } from "../components/SecretDialog";
import { Timestamp } from "../components/Timestamp";
import { QueryView } from "../components/states";
import { useConfirmedAction } from "../components/useConfirmedAction";
import { NotFoundPage } from "./NotFoundPage";
import { CreateKeyDialog } from "./serviceAccounts/CreateKeyDialog";
import { RotateKeyDialog } from "./serviceAccounts/RotateKeyDialog";
import { ScramCredentialsSection } from "./serviceAccounts/ScramCredentialsSection";

const STATUS_BADGE: Record<ApiKey["status"], string> = {
  active: "badge",
  rotating: "badge badge--warning",
  expired: "badge badge--danger",
  revoked: "badge badge--danger",
};

export function ServiceAccountDetailPage() {
  const id = Number(useParams().id);
  if (!Number.isInteger(id) || id <= 0) return <NotFoundPage />;
  return <ServiceAccountDetail id={id} />;
}

function ServiceAccountDetail({ id }: { id: number }) {
  const account = useServiceAccount(id);
  const teams = useTeams();
  const access = useAccess();

  return (
    <QueryView query={combineQueries(account, teams, access)} errorTitle="Could not load the service account">
      {([accountData, teamList, accessData]) => {
        const team = teamList.find((each) => each.id === accountData.team);
        const role = team ? roleInTeam(accessData, team) : null;
        return (
          <>
            <AccountHeader account={accountData} teamName={team?.name ?? "—"} role={role} />
            <KeysSection account={accountData} role={role} />
            <ScramCredentialsSection account={accountData} canManage={can.manageAccess(role)} />
          </>
        );
      }}
    </QueryView>
  );
}

function AccountHeader({
  account,
  teamName,
  role,
}: {
  account: ServiceAccount;
  teamName: string;
  role: TeamRole | null;
}) {
  const navigate = useNavigate();
  const remove = useDeleteServiceAccount();
  const [deleting, setDeleting] = useState(false);

  return (
    <>
      <PageHeader
        title={account.name}
        description={account.description || "No description."}
        actions={
          can.deleteServiceAccount(role) ? (
            <button type="button" className="button button--danger" onClick={() => setDeleting(true)}>
              Delete service account
            </button>
          ) : null
        }
      />
      <dl className="details">
        <dt>Principal</dt>
        <dd className="mono">{account.principal}</dd>
        <dt>Team</dt>
        <dd>
          <Link to={`/teams/${account.team}`}>{teamName}</Link>
        </dd>
        <dt>Created</dt>
        <dd>
          <Timestamp value={account.created_at} />
        </dd>
      </dl>
      <ConfirmDialog
        open={deleting}
        title={`Delete service account ${account.name}?`}
        description="Its API keys stop working at once and applications using it lose access."
        confirmationText={account.name}
        pending={remove.isPending}
        error={remove.isError ? describeError(remove.error) : null}
        onCancel={() => {
          setDeleting(false);
          remove.reset();
        }}
        onConfirm={() =>
          remove.mutate(account.id, {
            onSuccess: () => navigate(`/service-accounts?team=${account.team}`, { replace: true }),
          })
        }
      />
    </>
  );
}

const column = createColumnHelper<ApiKey>();

function KeysSection({ account, role }: { account: ServiceAccount; role: TeamRole | null }) {
  const keys = useServiceAccountKeys(account.id);
  const revocation = useConfirmedAction(useRevokeApiKey(), (key: ApiKey) => key.key_id);
  const manage = can.manageKeys(role);
  const [creating, setCreating] = useState(false);
  const [rotating, setRotating] = useState<ApiKey | null>(null);
  // The secret lives only in this state, and only until its dialog closes.
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(null);

  const columns = [
    column.accessor("name", { header: "Name" }),
    column.accessor("key_id", { header: "Key id", cell: (info) => <span className="mono">{info.getValue()}</span> }),
    column.accessor("role", { header: "Role", cell: (info) => ROLE_LABELS[info.getValue()] }),
    column.accessor("status", {
      header: "Status",
      cell: (info) => {
        const key = info.row.original;
        return (
          <span className={STATUS_BADGE[key.status]}>
            {key.status}
            {key.status === "rotating" && key.overlap_until ? (
              <>
                {" "}
                until <Timestamp value={key.overlap_until} />
              </>
            ) : null}
          </span>
        );
      },
    }),
    column.accessor("created_at", { header: "Created", cell: (info) => <Timestamp value={info.getValue()} /> }),
    column.accessor("expires_at", {
      header: "Expires",
      cell: (info) => {
        const value = info.getValue();
        return value ? <Timestamp value={value} /> : "Never";
      },
    }),
    column.accessor("last_used_at", {
      header: "Last used",
      cell: (info) => {
        const value = info.getValue();
        return value ? <Timestamp value={value} relative /> : "Never";
      },
    }),
    ...(manage
      ? [
          column.display({
            id: "actions",
            header: () => <span className="visually-hidden">Actions</span>,
            cell: (info) => {
              const key = info.row.original;
              return (
                <span className="actions">
                  {key.status === "active" ? (
                    <button
                      type="button"
                      className="button"
                      onClick={() => setRotating(key)}
                      aria-label={`Rotate ${key.name}`}
                    >
                      Rotate
                    </button>
                  ) : null}
                  {key.status === "active" || key.status === "rotating" ? (
                    <button
                      type="button"
                      className="button button--danger"
                      onClick={() => revocation.ask(key)}
                      aria-label={`Revoke ${key.name}`}
                    >
                      Revoke
                    </button>
                  ) : null}
                </span>
              );
            },
          }),
        ]
      : []),
  ];

  return (
    <section className="section" aria-labelledby="keys-heading">
      <div className="page-header">
        <h2 id="keys-heading" className="section__title">
          API keys
        </h2>
        {manage ? (
          <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
            Create API key
          </button>
        ) : null}
      </div>
      <QueryView query={keys} errorTitle="Could not load the API keys">
        {(rows) => (
          <DataTable
            label="API keys"
            columns={columns}
            rows={rows}
            getRowId={(row) => row.key_id}
            emptyTitle="No API keys yet"
            emptyDescription="A key lets an application call the API as this service account."
          />
        )}
      </QueryView>

      <CreateKeyDialog
        open={creating}
        account={account}
        roles={grantableRoles(role)}
        onClose={() => setCreating(false)}
        onCreated={(key) => {
          setCreating(false);
          setSecret({ title: `API key ${key.name} created`, value: key.secret });
        }}
      />
      <RotateKeyDialog
        apiKey={rotating}
        onClose={() => setRotating(null)}
        onRotated={(key) => {
          setRotating(null);
          setSecret({ title: `API key ${key.name} rotated`, value: key.secret });
        }}
      />
      <ConfirmDialog
        {...revocation.dialog}
        title={`Revoke API key ${revocation.target?.name ?? ""}?`}
        description="It stops working at once; applications using it are refused."
        confirmationText={revocation.target?.name ?? ""}
        confirmLabel="Revoke"
      />
      <SecretDialog secret={secret?.value ?? null} title={secret?.title ?? ""} onClose={() => setSecret(null)} />
    </section>
  );
}
