import { createColumnHelper } from "@tanstack/react-table";

import type { StreamsGroup, StreamsMember, StreamsTask, Subtopology } from "../../api/hooks/groups";
import { DataTable } from "../../components/DataTable";

/** "0: 0, 1 · 1: 2" — each subtopology with the partitions of its tasks. */
function tasksText(tasks: StreamsTask[]): string {
  return tasks.map((task) => `${task.subtopology}: ${task.partitions.join(", ")}`).join(" · ") || "—";
}

const memberColumn = createColumnHelper<StreamsMember>();
const memberColumns = [
  memberColumn.accessor("client_id", {
    header: "Client ID",
    cell: (info) => <span className="mono">{info.getValue()}</span>,
  }),
  memberColumn.accessor("process_id", {
    header: "Process",
    cell: (info) => <span className="mono muted">{info.getValue()}</span>,
  }),
  memberColumn.accessor("host", { header: "Host", cell: (info) => <span className="mono">{info.getValue()}</span> }),
  memberColumn.accessor("member_epoch", { header: "Epoch" }),
  memberColumn.accessor((member) => tasksText(member.active_tasks), { id: "active", header: "Active tasks" }),
  memberColumn.accessor((member) => tasksText(member.standby_tasks), { id: "standby", header: "Standby tasks" }),
  memberColumn.accessor((member) => tasksText(member.warmup_tasks), { id: "warmup", header: "Warm-up tasks" }),
];

const topologyColumn = createColumnHelper<Subtopology>();
const list = (names: string[]) => <span className="mono">{names.join(", ") || "—"}</span>;
const topologyColumns = [
  topologyColumn.accessor("subtopology_id", { header: "Subtopology" }),
  topologyColumn.accessor("source_topics", { header: "Source topics", cell: (info) => list(info.getValue()) }),
  topologyColumn.accessor("repartition_source_topics", {
    header: "Repartition sources",
    cell: (info) => list(info.getValue()),
  }),
  topologyColumn.accessor("repartition_sink_topics", {
    header: "Repartition sinks",
    cell: (info) => list(info.getValue()),
  }),
  topologyColumn.accessor("state_changelog_topics", { header: "Changelogs", cell: (info) => list(info.getValue()) }),
];

/** A Streams group's members with their tasks, and the topology its first member declared. */
export function StreamsGroupSections({ streams }: { streams: StreamsGroup | null }) {
  return (
    <>
      <section className="section" aria-labelledby="streams-members">
        <h2 id="streams-members" className="section__title">
          Members and tasks
        </h2>
        <DataTable
          label="Streams members"
          columns={memberColumns}
          rows={streams?.members ?? []}
          getRowId={(member) => member.member_id}
          emptyTitle="No members"
          emptyDescription="No instance of the application is in the group right now."
        />
      </section>
      <section className="section" aria-labelledby="streams-topology">
        <h2 id="streams-topology" className="section__title">
          Topology{streams && streams.topology_epoch >= 0 ? ` (epoch ${streams.topology_epoch})` : ""}
        </h2>
        <DataTable
          label="Subtopologies"
          columns={topologyColumns}
          rows={streams?.subtopologies ?? []}
          getRowId={(subtopology) => subtopology.subtopology_id}
          emptyTitle="No topology"
          emptyDescription="No member has declared the application's topology yet."
        />
      </section>
    </>
  );
}
