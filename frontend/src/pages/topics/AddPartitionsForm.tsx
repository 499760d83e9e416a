import { useState, type FormEvent } from "react";

import { useAddPartitions } from "../../api/hooks/topics";
import type { TopicDetail } from "../../api/types";
import { Field, FormActions, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";
import { LiveOperation } from "../clusters/OperationProgress";

/** Kafka only adds partitions; keys then map to other partitions, which the hint says. */
export function AddPartitionsForm({ topic, onDone }: { topic: TopicDetail; onDone: () => void }) {
  const current = topic.live.partitions.length || topic.partitions;
  const [total, setTotal] = useState(String(current + 1));
  const [error, setError] = useState<string | undefined>();
  const add = useAddPartitions(topic.id);
  // Set when the cluster did not confirm the change in time (202): the form follows the operation.
  const [confirming, setConfirming] = useState<number | null>(null);
  const server = formErrorsOf(add.error, ["partitions"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    const wanted = Number(total);
    if (!Number.isInteger(wanted) || wanted <= current) {
      setError(`Enter a total above the current ${current}.`);
      return;
    }
    setError(undefined);
    add.mutate(wanted, {
      onSuccess: (result) => ("operation" in result ? setConfirming(result.operation.id) : onDone()),
    });
  }

  if (confirming !== null) return <LiveOperation id={confirming} />;

  return (
    <form onSubmit={submit} noValidate>
      <Field
        label="New partition count"
        hint={`Now ${current}. Partitions cannot be removed again, and keyed messages may move to other partitions.`}
        error={error ?? server.fields.partitions}
      >
        {(control) => (
          <input
            {...control}
            className="input"
            type="number"
            min={current + 1}
            value={total}
            onChange={(event) => setTotal(event.target.value)}
          />
        )}
      </Field>
      <FormError message={server.form} />
      <FormActions submitLabel="Add partitions" pending={add.isPending} onCancel={onDone} />
    </form>
  );
}
