import { useState } from "react";

import { useUpdateBrokerConfigs } from "../../api/hooks/clusters";
import type { ConfigEntry } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ConfigEditForm } from "./ConfigEditForm";
import { ConfigsTable, type ConfigRow } from "./ConfigsTable";

/** One broker's configs; org admins edit those the broker can change at runtime. */
export function BrokerConfigs({
  clusterId,
  nodeId,
  configs,
  canAdminister,
}: {
  clusterId: number;
  nodeId: number;
  configs: Record<string, ConfigEntry>;
  canAdminister: boolean;
}) {
  const [editing, setEditing] = useState<ConfigRow | null>(null);
  const update = useUpdateBrokerConfigs(clusterId, nodeId);
  const close = () => {
    setEditing(null);
    update.reset();
  };

  function action(row: ConfigRow) {
    if (row.read_only) return <span className="muted">config file only</span>;
    return (
      <button type="button" className="button" aria-label={`Edit ${row.name}`} onClick={() => setEditing(row)}>
        Edit
      </button>
    );
  }

  return (
    <>
      <ConfigsTable label={`Broker ${nodeId} configs`} configs={configs} actions={canAdminister ? action : undefined} />
      <Dialog open={editing !== null} title={`Edit ${editing?.name ?? ""} on broker ${nodeId}`} onClose={close}>
        {editing ? (
          <ConfigEditForm
            config={editing}
            overrideSource="DYNAMIC_BROKER_CONFIG"
            pending={update.isPending}
            error={update.error}
            onCancel={close}
            save={(value) => update.mutate({ [editing.name]: value }, { onSuccess: close })}
          />
        ) : null}
      </Dialog>
    </>
  );
}
