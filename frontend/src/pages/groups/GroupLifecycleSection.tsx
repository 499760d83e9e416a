import { useState } from "react";
import { useNavigate } from "react-router";

import { describeError } from "../../api/errors";
import {
  INACTIVE_GROUP_STATES,
  useDeleteGroup,
  useDeleteGroupOffsets,
  type ConsumerGroupDetail,
} from "../../api/hooks/groups";
import { ConfirmDialog } from "../../components/ConfirmDialog";

interface GroupLifecycleSectionProps {
  group: ConsumerGroupDetail;
}

/**
 * Forgetting a group's committed offsets for chosen topics (OffsetDelete), and
 * deleting the whole group. Kafka refuses both while consumers are in the group
 * (or subscribed to the topic), so the section says so before anyone tries.
 */
export function GroupLifecycleSection({ group }: GroupLifecycleSectionProps) {
  const navigate = useNavigate();
  const topics = [...new Set(group.live.offsets.map((offset) => offset.topic))].sort();
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [confirming, setConfirming] = useState<"offsets" | "group" | null>(null);
  const deleteOffsets = useDeleteGroupOffsets(group.id);
  const deleteGroup = useDeleteGroup();
  const active = !INACTIVE_GROUP_STATES.has(group.live.state) || group.live.members.length > 0;
  const chosenTopics = topics.filter((topic) => chosen.has(topic));

  function toggle(topic: string, on: boolean) {
    const next = new Set(chosen);
    if (on) next.add(topic);
    else next.delete(topic);
    setChosen(next);
  }

  function cancel() {
    deleteOffsets.reset();
    deleteGroup.reset();
    setConfirming(null);
  }

  return (
    <section className="section" aria-labelledby="group-lifecycle">
      <h2 id="group-lifecycle" className="section__title">
        Delete offsets or the group
      </h2>
      {active ? (
        <p className="callout callout--warning">
          The group has active consumers: Kafka refuses to delete it, and to delete offsets of topics they are
          subscribed to. Stop its consumers first.
        </p>
      ) : null}
      {topics.length > 0 ? (
        <fieldset className="fieldset" aria-label="Topics whose offsets to delete">
          <legend className="field__label">Committed offsets to delete</legend>
          {topics.map((topic) => (
            <label key={topic} className="radio">
              <input
                type="checkbox"
                checked={chosen.has(topic)}
                onChange={(event) => toggle(topic, event.target.checked)}
              />{" "}
              <span className="mono">{topic}</span>
            </label>
          ))}
        </fieldset>
      ) : (
        <p className="muted">The group has no committed offsets.</p>
      )}
      {deleteOffsets.isSuccess ? (
        <p role="status">Deleted. The group starts these topics from its auto.offset.reset position next time.</p>
      ) : null}
      <div className="actions">
        {topics.length > 0 ? (
          <button
            type="button"
            className="button button--danger"
            disabled={chosenTopics.length === 0}
            onClick={() => setConfirming("offsets")}
          >
            Delete offsets ({chosenTopics.length} {chosenTopics.length === 1 ? "topic" : "topics"})
          </button>
        ) : null}
        <button type="button" className="button button--danger" onClick={() => setConfirming("group")}>
          Delete group
        </button>
      </div>
      <ConfirmDialog
        open={confirming === "offsets"}
        title={`Delete ${group.name}'s offsets for ${chosenTopics.join(", ")}?`}
        description="Its consumers lose their place in these topics and start again from auto.offset.reset (earliest or latest) when they come back."
        confirmationText={group.name}
        confirmLabel="Delete offsets"
        pending={deleteOffsets.isPending}
        error={deleteOffsets.isError ? describeError(deleteOffsets.error) : null}
        onCancel={cancel}
        onConfirm={() =>
          deleteOffsets.mutate(chosenTopics, {
            onSuccess: () => {
              setChosen(new Set());
              setConfirming(null);
            },
          })
        }
      />
      <ConfirmDialog
        open={confirming === "group"}
        title={`Delete the consumer group ${group.name}?`}
        description="Every committed offset of the group goes; consumers that join it later start from auto.offset.reset."
        confirmationText={group.name}
        confirmLabel="Delete group"
        pending={deleteGroup.isPending}
        error={deleteGroup.isError ? describeError(deleteGroup.error) : null}
        onCancel={cancel}
        onConfirm={() => deleteGroup.mutate(group.id, { onSuccess: () => navigate("/groups", { replace: true }) })}
      />
    </section>
  );
}
