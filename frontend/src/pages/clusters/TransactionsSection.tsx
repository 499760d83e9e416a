import { createColumnHelper } from "@tanstack/react-table";
import { useState } from "react";

import { describeError } from "../../api/errors";
import {
  useAbortTransaction,
  useHangingTransactions,
  useOpenTransactions,
  type HangingTransaction,
  type OpenTransaction,
} from "../../api/hooks/transactions";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { DataTable } from "../../components/DataTable";
import { Timestamp } from "../../components/Timestamp";
import { QueryView } from "../../components/states";

const openColumn = createColumnHelper<OpenTransaction>();
const openColumns = [
  openColumn.accessor("transactional_id", {
    header: "Transactional id",
    cell: (info) => <span className="mono table__wrap">{info.getValue()}</span>,
  }),
  openColumn.accessor("state", { header: "State" }),
  openColumn.accessor((row) => row.partitions.map((each) => `${each.topic}-${each.partition}`).join(", "), {
    id: "partitions",
    header: "Partitions",
    cell: (info) => <span className="mono table__wrap">{info.getValue() || "—"}</span>,
  }),
  openColumn.accessor((row) => row.started_at ?? "", {
    id: "started_at",
    header: "Open since",
    cell: (info) => (info.getValue() ? <Timestamp value={info.getValue()} relative /> : "—"),
  }),
  openColumn.accessor("timeout_ms", { header: "Timeout", cell: (info) => `${info.getValue() / 1000} s` }),
  openColumn.accessor((row) => `${row.producer_id} / ${row.producer_epoch}`, {
    id: "producer",
    header: () => <span title="Producer id / epoch">Producer</span>,
  }),
  openColumn.accessor((row) => row.team ?? "—", { id: "team", header: "Team" }),
];

function hangingKey(row: HangingTransaction): string {
  return `${row.topic}-${row.partition}:${row.producer_id}`;
}

/**
 * The cluster's transactions: those its coordinators know (refreshed while
 * shown), and for org admins the hanging ones — open on a partition with no
 * coordinator left to finish them, so read_committed consumers stop there —
 * each with an abort action.
 */
export function TransactionsSection({ clusterId, canAdminister }: { clusterId: number; canAdminister: boolean }) {
  const open = useOpenTransactions(clusterId);
  return (
    <>
      <section className="section" aria-labelledby="transactions-heading">
        <h2 id="transactions-heading" className="section__title">
          Transactions
        </h2>
        <QueryView query={open} errorTitle="Could not list the transactions">
          {(rows) => (
            <DataTable
              label="Transactions"
              columns={openColumns}
              rows={rows}
              getRowId={(row) => row.transactional_id}
              initialSorting={[{ id: "transactional_id", desc: false }]}
              emptyTitle="No transactional producers"
              emptyDescription="Producers with a transactional.id appear here once they have initialized."
            />
          )}
        </QueryView>
      </section>
      {canAdminister ? <HangingTransactions clusterId={clusterId} /> : null}
    </>
  );
}

function HangingTransactions({ clusterId }: { clusterId: number }) {
  const [looking, setLooking] = useState(false);
  const hanging = useHangingTransactions(clusterId, { enabled: looking });
  const abort = useAbortTransaction(clusterId);
  const [aborting, setAborting] = useState<HangingTransaction | null>(null);
  const column = createColumnHelper<HangingTransaction>();
  const columns = [
    column.accessor((row) => `${row.topic}-${row.partition}`, {
      id: "partition",
      header: "Partition",
      cell: (info) => <span className="mono">{info.getValue()}</span>,
    }),
    column.accessor((row) => `${row.producer_id} / ${row.producer_epoch}`, {
      id: "producer",
      header: "Producer id / epoch",
    }),
    column.accessor("open_transaction_offset", { header: "Open since offset" }),
    column.accessor((row) => new Date(row.last_timestamp_ms).toISOString(), {
      id: "last_write",
      header: "Last write",
      cell: (info) => <Timestamp value={info.getValue()} relative />,
    }),
    column.display({
      id: "actions",
      header: "",
      cell: (info) => (
        <button
          type="button"
          className="button button--danger"
          aria-label={`Abort the transaction of producer ${info.row.original.producer_id} on ${info.row.original.topic}-${info.row.original.partition}`}
          onClick={() => setAborting(info.row.original)}
        >
          Abort
        </button>
      ),
    }),
  ];
  return (
    <section className="section" aria-labelledby="hanging-heading">
      <h2 id="hanging-heading" className="section__title">
        Hanging transactions
      </h2>
      <p>
        A transaction left open on a partition after its producer and coordinator have moved on holds back the last
        stable offset: read_committed consumers stop there. Looking asks every partition&apos;s leader.
      </p>
      <p>
        <button
          type="button"
          className="button"
          disabled={hanging.isFetching}
          onClick={() => (looking ? void hanging.refetch() : setLooking(true))}
        >
          {hanging.isFetching ? "Looking…" : looking ? "Look again" : "Look for hanging transactions"}
        </button>
      </p>
      {looking ? (
        <QueryView query={hanging} errorTitle="Could not look for hanging transactions">
          {(rows) => (
            <DataTable
              label="Hanging transactions"
              columns={columns}
              rows={rows}
              getRowId={hangingKey}
              filterable={false}
              emptyTitle="No hanging transactions"
              emptyDescription="Every open transaction on a partition has a coordinator that will finish it."
            />
          )}
        </QueryView>
      ) : null}
      {abort.isSuccess ? <p role="status">The transaction was aborted.</p> : null}
      <ConfirmDialog
        open={aborting !== null}
        title={
          aborting
            ? `Abort producer ${aborting.producer_id}'s transaction on ${aborting.topic}-${aborting.partition}?`
            : ""
        }
        description="An abort marker is written on the partition: the transaction's records are never shown to read_committed consumers, and they move on past it."
        confirmationText={aborting ? `${aborting.topic}-${aborting.partition}` : ""}
        confirmLabel="Abort transaction"
        pending={abort.isPending}
        error={abort.isError ? describeError(abort.error) : null}
        onCancel={() => {
          setAborting(null);
          abort.reset();
        }}
        onConfirm={() => {
          if (aborting === null) return;
          abort.mutate(
            { topic: aborting.topic, partition: aborting.partition, producer_id: aborting.producer_id },
            { onSuccess: () => setAborting(null) },
          );
        }}
      />
    </section>
  );
}
