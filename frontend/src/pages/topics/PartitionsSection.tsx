import { createColumnHelper } from "@tanstack/react-table";

import type { TopicPartition } from "../../api/types";
import { DataTable } from "../../components/DataTable";
import { formatBytes } from "../../lib/bytes";

const column = createColumnHelper<TopicPartition>();

/** Replicas that are not in sync are named: they are the ones to worry about. */
function outOfSync(partition: TopicPartition): number[] {
  return partition.replicas.filter((replica) => !partition.isr.includes(replica));
}

function ReplicaBadges({ partition }: { partition: TopicPartition }) {
  const offline = partition.offline ?? partition.leader < 0;
  const underReplicated = partition.under_replicated ?? outOfSync(partition).length > 0;
  const adding = partition.adding_replicas ?? [];
  const removing = partition.removing_replicas ?? [];
  return (
    <>
      {offline ? <span className="badge badge--danger">offline</span> : null}{" "}
      {underReplicated ? <span className="badge badge--warning">under-replicated</span> : null}{" "}
      {adding.length > 0 || removing.length > 0 ? (
        <span className="badge badge--info">
          moving{adding.length > 0 ? ` +${adding.join(", +")}` : ""}
          {removing.length > 0 ? ` −${removing.join(", −")}` : ""}
        </span>
      ) : null}
    </>
  );
}

const columns = [
  column.accessor("partition", { header: "Partition" }),
  column.accessor("leader", {
    header: "Leader",
    cell: (info) => (info.getValue() < 0 ? <span className="badge badge--danger">none</span> : info.getValue()),
  }),
  column.accessor((row) => row.replicas.join(", "), {
    id: "replicas",
    header: "Replicas",
    cell: (info) => {
      const down = info.row.original.offline_replicas ?? [];
      return down.length === 0 ? info.getValue() : `${info.getValue()} (offline: ${down.join(", ")})`;
    },
  }),
  column.accessor((row) => row.isr.join(", "), {
    id: "isr",
    header: "In sync",
    cell: (info) => {
      const lagging = outOfSync(info.row.original);
      return lagging.length === 0 ? (
        info.getValue()
      ) : (
        <span className="badge badge--warning">
          {info.getValue() || "none"} (not in sync: {lagging.join(", ")})
        </span>
      );
    },
  }),
  column.display({ id: "state", header: "State", cell: (info) => <ReplicaBadges partition={info.row.original} /> }),
  column.accessor("start_offset", { header: "Start offset" }),
  column.accessor("end_offset", { header: "End offset" }),
  column.accessor((row) => row.end_offset - row.start_offset, { id: "messages", header: "Messages" }),
  column.accessor("size_bytes", { header: "Size", cell: (info) => formatBytes(info.getValue()) }),
];

export function PartitionsSection({ partitions }: { partitions: TopicPartition[] }) {
  return (
    <section className="section" aria-labelledby="partitions-heading">
      <h2 id="partitions-heading" className="section__title">
        Partitions
      </h2>
      <DataTable
        label="Partitions"
        columns={columns}
        rows={partitions}
        getRowId={(row) => String(row.partition)}
        filterable={false}
        pagination={partitions.length > 50 ? { pageSize: 50 } : false}
        emptyTitle="No partitions"
      />
    </section>
  );
}
