import { createColumnHelper } from "@tanstack/react-table";
import { useState, type FormEvent } from "react";
import { Link } from "react-router";

import { useClusters } from "../../api/hooks/clusters";
import {
  useCreateScramCredential,
  useDeleteScramCredential,
  useRotateScramCredential,
  useScramCredentials,
} from "../../api/hooks/scramCredentials";
import type { Cluster, ScramCredential, ScramCredentialCreate, ServiceAccount } from "../../api/types";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { DataTable } from "../../components/DataTable";
import { Dialog } from "../../components/Dialog";
import { FormActions, FormError } from "../../components/Field";
import { choicesOf, SelectField } from "../../components/FormFields";
import { SecretDialog } from "../../components/SecretDialog";
import { Timestamp } from "../../components/Timestamp";
import { QueryView } from "../../components/states";
import { useConfirmedAction } from "../../components/useConfirmedAction";
import { formErrorsOf } from "../../lib/formErrors";

type Mechanism = NonNullable<ScramCredentialCreate["mechanism"]>;
const MECHANISMS: Mechanism[] = ["SCRAM-SHA-512", "SCRAM-SHA-256"];

const column = createColumnHelper<ScramCredential>();

/**
 * The account's SCRAM passwords, one per cluster: what Kafka clients log in
 * with (`sasl.username` is the account's name). A password is shown once,
 * when it is issued or rotated.
 */
export function ScramCredentialsSection({ account, canManage }: { account: ServiceAccount; canManage: boolean }) {
  const credentials = useScramCredentials(account.id);
  const clusters = useClusters();
  const rotate = useRotateScramCredential();
  const removal = useConfirmedAction(useDeleteScramCredential(), (credential: ScramCredential) => credential.id);
  const [rotating, setRotating] = useState<ScramCredential | null>(null);
  const [creating, setCreating] = useState(false);
  // The password lives only in this state, and only until its dialog closes.
  const [password, setPassword] = useState<{ title: string; value: string } | null>(null);
  const clusterName = (id: number) => clusters.data?.find((cluster) => cluster.id === id)?.name ?? `Cluster ${id}`;

  const columns = [
    column.accessor((row) => clusterName(row.cluster), { id: "cluster", header: "Cluster" }),
    column.accessor("username", {
      header: "Username",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    column.accessor("mechanism", { header: "Mechanism" }),
    column.accessor("created_at", { header: "Issued", cell: (info) => <Timestamp value={info.getValue()} /> }),
    column.accessor("rotated_at", {
      header: "Rotated",
      cell: (info) => {
        const value = info.getValue();
        return value ? <Timestamp value={value} /> : "Never";
      },
    }),
    ...(canManage
      ? [
          column.display({
            id: "actions",
            header: () => <span className="visually-hidden">Actions</span>,
            cell: (info) => {
              const credential = info.row.original;
              const name = clusterName(credential.cluster);
              return (
                <span className="actions">
                  <button
                    type="button"
                    className="button"
                    aria-label={`Rotate the password on ${name}`}
                    onClick={() => setRotating(credential)}
                  >
                    Rotate
                  </button>
                  <button
                    type="button"
                    className="button button--danger"
                    aria-label={`Delete the credential on ${name}`}
                    onClick={() => removal.ask(credential)}
                  >
                    Delete
                  </button>
                </span>
              );
            },
          }),
        ]
      : []),
  ];

  const taken = new Set((credentials.data ?? []).map((credential) => credential.cluster));
  const available = (clusters.data ?? []).filter(
    (cluster) => cluster.organization === account.organization && !taken.has(cluster.id),
  );

  return (
    <section className="section" aria-labelledby="scram-heading">
      <div className="page-header">
        <h2 id="scram-heading" className="section__title">
          SCRAM credentials
        </h2>
        <span className="page-header__actions">
          {canManage ? (
            <Link className="button" to={`/acls?account=${account.id}`}>
              Grant access
            </Link>
          ) : null}
          {canManage && available.length > 0 ? (
            <button type="button" className="button button--primary" onClick={() => setCreating(true)}>
              Issue credential
            </button>
          ) : null}
        </span>
      </div>
      <QueryView query={credentials} errorTitle="Could not load the SCRAM credentials">
        {(list) => (
          <DataTable
            label="SCRAM credentials"
            columns={columns}
            rows={list}
            getRowId={(row) => String(row.id)}
            filterable={false}
            emptyTitle="No SCRAM credentials"
            emptyDescription="Issue one per cluster the application connects to."
          />
        )}
      </QueryView>
      <Dialog open={creating} title={`Issue a SCRAM credential for ${account.name}`} onClose={() => setCreating(false)}>
        <IssueCredentialForm
          account={account}
          clusters={available}
          onCancel={() => setCreating(false)}
          onIssued={(value) => {
            setCreating(false);
            setPassword({ title: "SCRAM credential issued", value });
          }}
        />
      </Dialog>
      <ConfirmDialog
        open={rotating !== null}
        title="Rotate this SCRAM password?"
        description="A new password replaces the old one at once: clients using the old one are refused at their next login."
        confirmationText={rotating ? clusterName(rotating.cluster) : ""}
        confirmLabel="Rotate"
        pending={rotate.isPending}
        error={rotate.isError ? rotate.error.message : null}
        onCancel={() => {
          setRotating(null);
          rotate.reset();
        }}
        onConfirm={() =>
          rotating &&
          rotate.mutate(rotating.id, {
            onSuccess: (rotated) => {
              setRotating(null);
              setPassword({ title: "SCRAM password rotated", value: rotated.password });
            },
          })
        }
      />
      <ConfirmDialog
        {...removal.dialog}
        title="Delete this SCRAM credential?"
        description="Clients using it can no longer log in to this cluster."
        confirmationText={removal.target ? clusterName(removal.target.cluster) : ""}
      />
      <SecretDialog secret={password?.value ?? null} title={password?.title ?? ""} onClose={() => setPassword(null)} />
    </section>
  );
}

function IssueCredentialForm({
  account,
  clusters,
  onCancel,
  onIssued,
}: {
  account: ServiceAccount;
  clusters: Cluster[];
  onCancel: () => void;
  onIssued: (password: string) => void;
}) {
  const issue = useCreateScramCredential();
  const [cluster, setCluster] = useState<number | "">(clusters[0]?.id ?? "");
  const [mechanism, setMechanism] = useState<Mechanism>("SCRAM-SHA-512");
  const server = formErrorsOf(issue.error, ["cluster", "mechanism"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (cluster === "") return;
    issue.mutate(
      { service_account: account.id, cluster, mechanism },
      { onSuccess: (issued) => onIssued(issued.password) },
    );
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
      <SelectField
        label="Mechanism"
        value={mechanism}
        choices={MECHANISMS.map((each) => [each, each] as const)}
        onChange={setMechanism}
        error={server.fields.mechanism}
      />
      <FormError message={server.form} />
      <FormActions submitLabel="Issue credential" pending={issue.isPending} onCancel={onCancel} />
    </form>
  );
}
