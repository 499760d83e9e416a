import { useState } from "react";
import { Link, NavLink, useLocation, useNavigate, useParams } from "react-router";

import { combineQueries } from "../api/combineQueries";
import { describeError } from "../api/errors";
import { useAccess } from "../api/hooks/access";
import { useClusters } from "../api/hooks/clusters";
import { useTeams } from "../api/hooks/teams";
import { managedKey, byClusterAndName, useManagedResources } from "../api/hooks/managedResources";
import { useDeleteTopic, usePurgeTopic, useTopic } from "../api/hooks/topics";
import type { Cluster, Team, TopicDetail } from "../api/types";
import type { Access } from "../auth/permissions";
import { can, isOrgAdmin, roleInTeam } from "../auth/permissions";
import { ActionsMenu } from "../components/ActionsMenu";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Dialog } from "../components/Dialog";
import { PageHeader } from "../components/PageHeader";
import { QueryView } from "../components/states";
import { formatBytes } from "../lib/bytes";
import { MessageBrowser } from "./messages/MessageBrowser";
import { ProduceMessageForm } from "./messages/ProduceMessageForm";
import { NotFoundPage } from "./NotFoundPage";
import { AddPartitionsForm } from "./topics/AddPartitionsForm";
import { ConfigsSection } from "./topics/ConfigsSection";
import { ManagedAsCodeBadge } from "./topics/ManagedAsCode";
import { PartitionsSection } from "./topics/PartitionsSection";
import { PurgePartitionForm } from "./topics/PurgePartitionForm";
import { TOPIC_STATUS_BADGES, TOPIC_STATUS_LABELS, topicStatus } from "./topics/topicStatus";

export function TopicDetailPage() {
  const id = Number(useParams().id);
  if (!Number.isInteger(id) || id <= 0) return <NotFoundPage />;
  return <TopicDetailView id={id} />;
}

/** Unmanaged topics belong to no team: only their cluster's org admins change them. */
function mayChange(access: Access, team: Team | undefined, cluster: Cluster | undefined): boolean {
  if (team) return can.manageTopics(roleInTeam(access, team));
  return cluster !== undefined && isOrgAdmin(access, cluster.organization);
}

function TopicDetailView({ id }: { id: number }) {
  const topic = useTopic(id);
  const teams = useTeams();
  const clusters = useClusters();
  const access = useAccess();
  return (
    <QueryView
      query={combineQueries(topic, teams, clusters, access)}
      errorTitle="Could not load the topic"
      loadingLabel="Asking the cluster about the topic…"
    >
      {([topicData, teamList, clusterList, accessData]) => {
        const team = teamList.find((each) => each.id === topicData.team);
        const cluster = clusterList.find((each) => each.id === topicData.cluster);
        return (
          <TopicSections
            topic={topicData}
            team={team}
            cluster={cluster}
            canChange={mayChange(accessData, team, cluster)}
          />
        );
      }}
    </QueryView>
  );
}

type Action = "produce" | "partitions" | "purge" | "purge-partition" | "delete" | null;

function TopicSections({
  topic,
  team,
  cluster,
  canChange,
}: {
  topic: TopicDetail;
  team: Team | undefined;
  cluster: Cluster | undefined;
  canChange: boolean;
}) {
  const navigate = useNavigate();
  const location = useLocation();
  const onMessages = location.pathname.endsWith("/messages");
  const [action, setAction] = useState<Action>(null);
  const remove = useDeleteTopic(topic.id);
  const purge = usePurgeTopic(topic.id);
  const status = topicStatus(topic);
  const managedTopics = useManagedResources("Topic");
  const asCode = byClusterAndName(managedTopics.data).get(managedKey(topic.cluster, topic.name));
  const totalMessages = topic.live.partitions.reduce((sum, each) => sum + (each.end_offset - each.start_offset), 0);
  const totalSize = topic.live.partitions.reduce((sum, each) => sum + each.size_bytes, 0);
  const close = () => setAction(null);

  return (
    <>
      <PageHeader
        title={topic.name}
        description={
          <>
            <span className={TOPIC_STATUS_BADGES[status]}>{TOPIC_STATUS_LABELS[status]}</span> on{" "}
            {cluster ? <Link to={`/clusters/${cluster.id}`}>{cluster.name}</Link> : `cluster ${topic.cluster}`} ·{" "}
            {team ? <Link to={`/teams/${team.id}`}>{team.name}</Link> : "unmanaged"}{" "}
            <ManagedAsCodeBadge resource={asCode} />
          </>
        }
        actions={
          canChange && topic.live.exists ? (
            <>
              <button type="button" className="button button--primary" onClick={() => setAction("produce")}>
                Produce message
              </button>
              <button type="button" className="button" onClick={() => setAction("partitions")}>
                Add partitions
              </button>
              <ActionsMenu
                label="More actions"
                actions={[
                  { label: "Purge all messages…", destructive: true, onSelect: () => setAction("purge") },
                  { label: "Purge a partition…", destructive: true, onSelect: () => setAction("purge-partition") },
                  { label: "Delete topic…", destructive: true, onSelect: () => setAction("delete") },
                ]}
              />
            </>
          ) : null
        }
      />
      {topic.live.exists ? (
        <dl className="details">
          <dt>Partitions</dt>
          <dd>{topic.live.partitions.length}</dd>
          <dt>Replication factor</dt>
          <dd>{topic.observed_replication_factor ?? topic.replication_factor}</dd>
          <dt>Messages</dt>
          <dd>{totalMessages.toLocaleString()}</dd>
          <dt>Size</dt>
          <dd>{formatBytes(totalSize)}</dd>
          {asCode ? (
            <>
              <dt>Managed as code</dt>
              <dd>
                file set <span className="mono">{asCode.file_set}</span>, change set #{asCode.change_set} (
                {new Date(asCode.change_set_created_at).toLocaleString()}); changes made here are put back by its next
                apply
              </dd>
            </>
          ) : null}
        </dl>
      ) : (
        <p className="callout callout--danger" role="alert">
          The cluster does not have this topic (any more). The next reconcile run will record it as missing.
        </p>
      )}
      <nav className="tabs" aria-label="Topic sections">
        <NavLink to={`/topics/${topic.id}`} end className="tabs__tab">
          Partitions and configs
        </NavLink>
        <NavLink to={`/topics/${topic.id}/messages`} className="tabs__tab">
          Messages
        </NavLink>
      </nav>
      {onMessages ? (
        <MessageBrowser topic={topic} />
      ) : (
        <>
          <PartitionsSection partitions={topic.live.partitions} />
          <ConfigsSection topic={topic} canChange={canChange} />
        </>
      )}

      <Dialog open={action === "produce"} title={`Produce a message to ${topic.name}`} onClose={close}>
        <ProduceMessageForm topic={topic} onClose={close} />
      </Dialog>
      <Dialog open={action === "partitions"} title="Add partitions" onClose={close}>
        <AddPartitionsForm topic={topic} onDone={close} />
      </Dialog>
      <Dialog open={action === "purge-partition"} title={`Purge a partition of ${topic.name}`} onClose={close}>
        <PurgePartitionForm topic={topic} onDone={close} />
      </Dialog>
      <ConfirmDialog
        open={action === "purge"}
        title={`Purge every message of ${topic.name}?`}
        description="All records in every partition are deleted; the topic and its configs stay. Consumers continue from the new start."
        confirmationText={topic.name}
        confirmLabel="Purge"
        pending={purge.isPending}
        error={purge.isError ? describeError(purge.error) : null}
        onCancel={() => {
          close();
          purge.reset();
        }}
        onConfirm={() => purge.mutate({}, { onSuccess: close })}
      />
      <ConfirmDialog
        open={action === "delete"}
        title={`Delete topic ${topic.name}?`}
        description="The topic and all its messages are removed from the cluster. This cannot be undone."
        confirmationText={topic.name}
        pending={remove.isPending}
        error={remove.isError ? describeError(remove.error) : null}
        onCancel={() => {
          close();
          remove.reset();
        }}
        onConfirm={() => remove.mutate(topic.name, { onSuccess: () => navigate("/topics", { replace: true }) })}
      />
    </>
  );
}
