import { useState, type FormEvent } from "react";

import { describeError } from "../../api/errors";
import { usePurgeTopic } from "../../api/hooks/topics";
import type { TopicDetail } from "../../api/types";
import { Field, FormActions, FormError } from "../../components/Field";

const NUMBER = new Intl.NumberFormat();

interface PurgePartitionFormProps {
  topic: TopicDetail;
  onDone: () => void;
}

/**
 * Deletes one partition's records before an offset (Kafka's DeleteRecords):
 * the partition's new start offset becomes that offset, later records stay.
 */
export function PurgePartitionForm({ topic, onDone }: PurgePartitionFormProps) {
  const partitions = topic.live.partitions;
  const purge = usePurgeTopic(topic.id);
  const [partition, setPartition] = useState(partitions[0]?.partition ?? 0);
  const current = partitions.find((each) => each.partition === partition);
  const [offset, setOffset] = useState(String(current?.end_offset ?? 0));
  const [done, setDone] = useState<string | null>(null);
  const value = Number(offset);
  const start = current?.start_offset ?? 0;
  const end = current?.end_offset ?? 0;
  const invalid = offset === "" || !Number.isInteger(value) || value < start || value > end;

  function choose(next: number) {
    setPartition(next);
    setOffset(String(partitions.find((each) => each.partition === next)?.end_offset ?? 0));
    setDone(null);
    purge.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (invalid) return;
    purge.mutate(
      { partition, before_offset: value },
      {
        onSuccess: (result) =>
          setDone(
            `Partition ${partition} now starts at offset ${NUMBER.format(result.start_offsets[String(partition)] ?? value)}.`,
          ),
      },
    );
  }

  return (
    <form onSubmit={submit} noValidate aria-label="Purge a partition">
      <Field label="Partition">
        {(control) => (
          <select
            {...control}
            className="input"
            value={partition}
            onChange={(event) => choose(Number(event.target.value))}
          >
            {partitions.map((each) => (
              <option key={each.partition} value={each.partition}>
                {each.partition} — offsets {NUMBER.format(each.start_offset)} to {NUMBER.format(each.end_offset)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Delete records before offset"
        hint={`Between ${NUMBER.format(start)} (nothing) and ${NUMBER.format(end)} (every record of the partition).`}
        error={offset !== "" && invalid ? `Choose an offset from ${start} to ${end}.` : undefined}
      >
        {(control) => (
          <input
            {...control}
            className="input"
            type="number"
            min={start}
            max={end}
            value={offset}
            onChange={(event) => {
              setOffset(event.target.value);
              setDone(null);
            }}
          />
        )}
      </Field>
      {!invalid && !done ? (
        <p className="callout callout--warning">
          {NUMBER.format(value - start)} {value - start === 1 ? "record" : "records"} of partition {partition} will be
          deleted. Consumers behind offset {NUMBER.format(value)} continue from there.
        </p>
      ) : null}
      {done ? <p role="status">{done}</p> : null}
      <FormError message={purge.isError ? describeError(purge.error) : null} />
      <FormActions submitLabel="Delete records" pending={purge.isPending || invalid} onCancel={onDone} />
    </form>
  );
}
