import { createColumnHelper } from "@tanstack/react-table";
import { useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { useAccess } from "../api/hooks/access";
import { useClusters } from "../api/hooks/clusters";
import {
  GROUP_TYPES,
  useConsumerGroup,
  type ConsumerGroupDetail,
  type GroupMember,
  type PartitionLag,
} from "../api/hooks/groups";
import { useTeams } from "../api/hooks/teams";
import { DataTable } from "../components/DataTable";
import { PageHeader } from "../components/PageHeader";
import { Timestamp } from "../components/Timestamp";
import { QueryView } from "../components/states";
import { canResetOffsets } from "./groups/groupAccess";
import { GroupLifecycleSection } from "./groups/GroupLifecycleSection";
import { GroupStateBadge } from "./groups/GroupStateBadge";
import { LagSection } from "./groups/LagSection";
import { OffsetResetSection } from "./groups/OffsetResetSection";
import { DeliverySettingsSection, SharePartitionsSection } from "./groups/ShareGroupSections";
import { StreamsGroupSections } from "./groups/StreamsGroupSections";
import "./groups/groups.css";
import { NotFoundPage } from "./NotFoundPage";

const NUMBER = new Intl.NumberFormat();
const TYPE_LABEL = new Map<string, string>(GROUP_TYPES);

export function GroupDetailPage() {
  const id = Number(useParams().id);
  if (!Number.isInteger(id) || id <= 0) return <NotFoundPage />;
  return <GroupDetailView id={id} />;
}

function GroupDetailView({ id }: { id: number }) {
  const group = useConsumerGroup(id);
  const access = useAccess();
  const teams = useTeams();
  const clusters = useClusters();
  return (
    <QueryView
      query={combineQueries(group, access, teams, clusters)}
      loadingLabel="Asking the cluster about the group…"
      errorTitle="Could not load the consumer group"
    >
      {([groupData, accessData, teamsData, clustersData]) => (
        <GroupSections
          group={groupData}
          clusterName={
            clustersData.find((cluster) => cluster.id === groupData.cluster)?.name ?? `#${groupData.cluster}`
          }
          teamName={teamsData.find((team) => team.id === groupData.team)?.name ?? null}
          canReset={canResetOffsets(accessData, groupData, teamsData, clustersData)}
        />
      )}
    </QueryView>
  );
}

function GroupSections({
  group,
  clusterName,
  teamName,
  canReset,
}: {
  group: ConsumerGroupDetail;
  clusterName: string;
  teamName: string | null;
  canReset: boolean;
}) {
  const live = group.live;
  const kind = group.group_type ?? "classic";
  return (
    <>
      <PageHeader
        title={group.name}
        description={
          <>
            <GroupStateBadge state={live.state} /> on {clusterName}
            {teamName ? ` · team ${teamName}` : " · no owning team"} · {live.members.length}{" "}
            {live.members.length === 1 ? "member" : "members"} · {NUMBER.format(live.total_lag)}{" "}
            {kind === "share" ? "messages not yet acknowledged" : "messages behind"}
          </>
        }
      />
      <dl className="details">
        <dt>Type</dt>
        <dd>{TYPE_LABEL.get(kind) ?? kind}</dd>
        <dt>{kind === "share" ? "Assignor" : "Protocol"}</dt>
        <dd>{live.protocol || "—"}</dd>
        <dt>Last sampled</dt>
        <dd>{group.observed_at ? <Timestamp value={group.observed_at} /> : "not yet"}</dd>
      </dl>

      <LagSection group={group.id} />

      {kind === "share" ? (
        <SharePartitionsSection partitions={live.share_partitions} />
      ) : (
        <section className="section" aria-labelledby="group-lag">
          <h2 id="group-lag" className="section__title">
            Lag per partition
          </h2>
          <PartitionLagTable offsets={live.offsets} members={live.members} />
        </section>
      )}

      {kind === "streams" ? (
        <StreamsGroupSections streams={live.streams} />
      ) : (
        <section className="section" aria-labelledby="group-members">
          <h2 id="group-members" className="section__title">
            Members
          </h2>
          <MembersTable members={live.members} />
        </section>
      )}

      {kind === "share" ? (
        <DeliverySettingsSection group={group.id} configs={live.share_configs} canEdit={canReset} />
      ) : null}

      <OffsetResetSection group={group} canReset={canReset} />
      {canReset ? <GroupLifecycleSection group={group} /> : null}
    </>
  );
}

interface LagRow extends PartitionLag {
  owner: string;
}

const lagColumn = createColumnHelper<LagRow>();
const lagColumns = [
  lagColumn.accessor("topic", { header: "Topic", cell: (info) => <span className="mono">{info.getValue()}</span> }),
  lagColumn.accessor("partition", { header: "Partition" }),
  lagColumn.accessor("committed_offset", {
    header: "Committed",
    cell: (info) => (info.getValue() < 0 ? "none" : NUMBER.format(info.getValue())),
  }),
  lagColumn.accessor("log_end_offset", { header: "Log end", cell: (info) => NUMBER.format(info.getValue()) }),
  lagColumn.accessor("lag", { header: "Lag", cell: (info) => NUMBER.format(info.getValue()) }),
  lagColumn.accessor("owner", {
    header: "Assigned to",
    cell: (info) => <span className="mono">{info.getValue()}</span>,
  }),
];

function PartitionLagTable({ offsets, members }: { offsets: PartitionLag[]; members: GroupMember[] }) {
  const owners = new Map<string, string>();
  for (const member of members) {
    for (const assigned of member.assignments) {
      owners.set(`${assigned.topic}:${assigned.partition}`, member.client_id || member.member_id);
    }
  }
  const rows = offsets.map((offset) => ({
    ...offset,
    owner: owners.get(`${offset.topic}:${offset.partition}`) ?? "—",
  }));
  return (
    <DataTable
      label="Partition lag"
      columns={lagColumns}
      rows={rows}
      getRowId={(row) => `${row.topic}:${row.partition}`}
      initialSorting={[{ id: "lag", desc: true }]}
      emptyTitle="No committed offsets"
      emptyDescription="The group has not committed an offset on any partition."
    />
  );
}

const memberColumn = createColumnHelper<GroupMember>();
const memberColumns = [
  memberColumn.accessor("client_id", {
    header: "Client ID",
    cell: (info) => <span className="mono">{info.getValue()}</span>,
  }),
  memberColumn.accessor("host", { header: "Host", cell: (info) => <span className="mono">{info.getValue()}</span> }),
  memberColumn.accessor(
    (member) =>
      member.assignments
        .map((assigned) => `${assigned.topic}-${assigned.partition}`)
        .sort()
        .join(", ") || "—",
    { id: "assignments", header: "Assigned partitions" },
  ),
  memberColumn.accessor("member_id", {
    header: "Member ID",
    cell: (info) => <span className="mono muted">{info.getValue()}</span>,
  }),
];

function MembersTable({ members }: { members: GroupMember[] }) {
  return (
    <DataTable
      label="Members"
      columns={memberColumns}
      rows={members}
      getRowId={(member) => member.member_id}
      filterable={members.length > 10}
      emptyTitle="No members"
      emptyDescription="No consumer is in the group right now."
    />
  );
}
