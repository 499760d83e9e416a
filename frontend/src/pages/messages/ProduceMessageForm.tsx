import { useState, type FormEvent } from "react";
import { Link } from "react-router";

import { useProduceMessage } from "../../api/hooks/topics";
import type { Produced, ProduceRequest, TopicDetail } from "../../api/types";
import { Field, FormError } from "../../components/Field";
import { SelectField, TextField, type Choice } from "../../components/FormFields";
import { formErrorsOf } from "../../lib/formErrors";
import { KeyValueRows, rowsToRecord, type KeyValueRow } from "../topics/KeyValueRows";
import { partitionChoices } from "./partitionChoices";

type Encoding = NonNullable<ProduceRequest["encoding"]>;
const ENCODINGS: Choice<Encoding>[] = [
  ["utf-8", "UTF-8 text"],
  ["base64", "base64"],
];

/** One test message: key, value, headers, optionally a partition; the result names where it landed. */
export function ProduceMessageForm({ topic, onClose }: { topic: TopicDetail; onClose: () => void }) {
  const produce = useProduceMessage(topic.id);
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const [headers, setHeaders] = useState<KeyValueRow[]>([]);
  const [partition, setPartition] = useState("");
  const [encoding, setEncoding] = useState<Encoding>("utf-8");
  const [produced, setProduced] = useState<Produced | null>(null);
  const server = formErrorsOf(produce.error, ["key", "value", "headers", "partition", "encoding"]);
  const partitionCount = topic.live.partitions.length || topic.partitions;

  function submit(event: FormEvent) {
    event.preventDefault();
    setProduced(null);
    produce.mutate(
      {
        key: key === "" ? null : key,
        value,
        headers: rowsToRecord(headers),
        encoding,
        ...(partition === "" ? {} : { partition: Number(partition) }),
      },
      { onSuccess: setProduced },
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <TextField
        label="Key"
        hint="Empty sends no key (null)."
        value={key}
        onChange={setKey}
        error={server.fields.key}
      />
      <Field label="Value" error={server.fields.value}>
        {(control) => (
          <textarea
            {...control}
            className="input mono"
            rows={6}
            value={value}
            onChange={(event) => setValue(event.target.value)}
          />
        )}
      </Field>
      <div className="inline-form">
        <SelectField
          label="Encoding"
          hint="base64 sends the decoded bytes of key and value."
          value={encoding}
          choices={ENCODINGS}
          onChange={setEncoding}
          error={server.fields.encoding}
        />
        <SelectField
          label="Partition"
          value={partition}
          choices={partitionChoices(partitionCount)}
          emptyLabel="Chosen by the key"
          onChange={setPartition}
          error={server.fields.partition}
        />
      </div>
      <KeyValueRows legend="Headers" keyLabel="Header" valueLabel="Header value" rows={headers} onChange={setHeaders} />
      <FormError message={server.form} />
      {produced ? (
        <p className="callout" role="status">
          Produced to partition {produced.partition} at offset {produced.offset}.{" "}
          <Link
            to={`/topics/${topic.id}/messages?partition=${produced.partition}&start=offset&offset=${produced.offset}`}
            onClick={onClose}
          >
            Browse it
          </Link>
        </p>
      ) : null}
      <div className="dialog__actions">
        <button type="button" className="button" onClick={onClose}>
          {produced ? "Close" : "Cancel"}
        </button>
        <button type="submit" className="button button--primary" disabled={produce.isPending}>
          {produced ? "Produce another" : "Produce"}
        </button>
      </div>
    </form>
  );
}
