import { useState, type FormEvent } from "react";

import { describeError } from "../api/errors";
import { useReassignments, useStartReassignment, type PartitionReassignment } from "../api/hooks/replication";
import { formatBytes } from "../lib/bytes";
import { SelectField, TextField } from "./FormFields";
import { ProgressBar } from "./ProgressBar";
import { EmptyState, QueryView } from "./states";

function copiedBytes(move: PartitionReassignment): number {
  return move.adding_bytes.reduce((sum, replica) => sum + Math.min(replica.bytes, move.leader_bytes), 0);
}

function MovingPartition({ move }: { move: PartitionReassignment }) {
  const name = `${move.topic}-${move.partition}`;
  return (
    <li className="operation">
      <div className="operation__header">
        <span className="mono">{name}</span> → replicas {move.target.join(", ")}
        {move.adding.length > 0 ? ` · adding ${move.adding.join(", ")}` : ""}
        {move.removing.length > 0 ? ` · removing ${move.removing.join(", ")}` : ""}
      </div>
      <ProgressBar percent={move.percent} label={`${name}: ${move.percent.toFixed(0)}% copied`} />
      <p className="operation__step">
        {formatBytes(copiedBytes(move))} of {formatBytes(move.leader_bytes * move.adding.length)} copied from leader{" "}
        {move.leader}
      </p>
    </li>
  );
}

function MoveOntoBrokerForm({ clusterId, brokerIds }: { clusterId: number; brokerIds: number[] }) {
  const [topic, setTopic] = useState("");
  const [broker, setBroker] = useState<number | "">("");
  const start = useStartReassignment(clusterId);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (broker === "" || !topic.trim()) return;
    start.mutate({ topic: topic.trim(), onto_broker: broker }, { onSuccess: () => setTopic("") });
  }

  return (
    <form className="filters" onSubmit={submit} aria-label="Move a topic onto a broker">
      <TextField label="Topic" value={topic} onChange={setTopic} placeholder="orders" />
      <SelectField
        label="Onto broker"
        value={broker}
        emptyLabel="Choose a broker"
        choices={brokerIds.map((id) => [id, `broker ${id}`] as const)}
        onChange={setBroker}
      />
      <button
        type="submit"
        className="button button--primary"
        disabled={start.isPending || broker === "" || !topic.trim()}
      >
        {start.isPending ? "Starting…" : "Move replicas"}
      </button>
      {start.isError ? (
        <p className="form-error" role="alert">
          {describeError(start.error)}
        </p>
      ) : null}
      {start.isSuccess ? (
        <p role="status">
          Moving {start.data.requested.length} {start.data.requested.length === 1 ? "partition" : "partitions"}.
        </p>
      ) : null}
    </form>
  );
}

/**
 * A replicated cluster's partition reassignments: each moving partition with
 * its copy progress (polled while anything moves), and, for org admins, a
 * form that moves one replica of each of a topic's partitions onto a broker.
 */
export function ReassignmentsPanel({
  clusterId,
  brokerIds,
  canAdminister,
}: {
  clusterId: number;
  brokerIds: number[];
  canAdminister: boolean;
}) {
  const reassignments = useReassignments(clusterId);
  return (
    <section className="section" aria-labelledby="reassignments-heading">
      <h2 id="reassignments-heading" className="section__title">
        Partition reassignments
      </h2>
      <QueryView
        query={reassignments}
        errorTitle="Could not load the reassignments"
        isEmpty={(view) => view.partitions.length === 0}
        empty={<EmptyState title="No partitions are moving" />}
      >
        {(view) => (
          <>
            <ProgressBar percent={view.percent} label={`All moves: ${view.percent.toFixed(0)}% copied`} />
            <ul className="operations" aria-label="Moving partitions" style={{ listStyle: "none", padding: 0 }}>
              {view.partitions.map((move) => (
                <MovingPartition key={`${move.topic}-${move.partition}`} move={move} />
              ))}
            </ul>
          </>
        )}
      </QueryView>
      {canAdminister ? <MoveOntoBrokerForm clusterId={clusterId} brokerIds={brokerIds} /> : null}
    </section>
  );
}
