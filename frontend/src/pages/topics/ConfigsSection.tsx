import { useState } from "react";

import { useUpdateTopicConfigs } from "../../api/hooks/topics";
import type { TopicDetail } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { LiveOperation } from "../clusters/OperationProgress";
import { ConfigEditForm } from "../configs/ConfigEditForm";
import { ConfigsTable, type ConfigRow } from "../configs/ConfigsTable";

export function ConfigsSection({ topic, canChange }: { topic: TopicDetail; canChange: boolean }) {
  const [editing, setEditing] = useState<ConfigRow | null>(null);

  function action(row: ConfigRow) {
    if (row.read_only) return <span className="muted">read-only</span>;
    if (!row.rule.allowed) return <span className="muted">not allowed by the team's policy</span>;
    return (
      <button type="button" className="button" aria-label={`Edit ${row.name}`} onClick={() => setEditing(row)}>
        Edit
      </button>
    );
  }

  return (
    <section className="section" aria-labelledby="configs-heading">
      <h2 id="configs-heading" className="section__title">
        Configs
      </h2>
      <ConfigsTable label="Topic configs" configs={topic.live.configs} actions={canChange ? action : undefined} />
      <Dialog open={editing !== null} title={`Edit ${editing?.name ?? ""}`} onClose={() => setEditing(null)}>
        {editing ? <EditConfigForm topic={topic} config={editing} onDone={() => setEditing(null)} /> : null}
      </Dialog>
    </section>
  );
}

export function EditConfigForm({
  topic,
  config,
  onDone,
}: {
  topic: TopicDetail;
  config: ConfigRow;
  onDone: () => void;
}) {
  const update = useUpdateTopicConfigs(topic.id);
  // Set when the cluster did not confirm the change in time (202): the form follows the operation.
  const [confirming, setConfirming] = useState<number | null>(null);
  if (confirming !== null) return <LiveOperation id={confirming} />;
  return (
    <ConfigEditForm
      config={config}
      overrideSource="DYNAMIC_TOPIC_CONFIG"
      pending={update.isPending}
      error={update.error}
      onCancel={onDone}
      save={(value) =>
        update.mutate(
          { [config.name]: value },
          { onSuccess: (result) => ("operation" in result ? setConfirming(result.operation.id) : onDone()) },
        )
      }
    />
  );
}
