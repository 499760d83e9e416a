import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";

import { describeError } from "../../api/errors";
import { schemaKeys } from "../../api/hooks/schemas";
import { schemaRegistry, type SchemaType } from "../../api/schemaRegistry";
import { Field, FormActions, FormError } from "../../components/Field";
import { subjectPath } from "./subjectNames";

const SCHEMA_TYPES: readonly SchemaType[] = ["AVRO", "JSON", "PROTOBUF"];

/** A new subject is its first registered version (Confluent has no empty subjects). */
export function CreateSubjectForm({ cluster, onCancel }: { cluster: number; onCancel: () => void }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [subject, setSubject] = useState("");
  const [schemaType, setSchemaType] = useState<SchemaType>("AVRO");
  const [schema, setSchema] = useState("");
  const register = useMutation({
    mutationFn: () =>
      schemaRegistry.register(cluster, subject.trim(), {
        schema,
        ...(schemaType === "AVRO" ? {} : { schemaType }),
      }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: schemaKeys.subjects(cluster) });
      navigate(subjectPath(cluster, subject.trim()));
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    if (subject.trim() && schema.trim()) register.mutate();
  }

  return (
    <form onSubmit={submit} aria-label="New subject">
      <Field label="Subject" hint="Usually <topic>-value or <topic>-key; it must be under one of your team's prefixes.">
        {(control) => (
          <input
            {...control}
            className="input mono"
            required
            maxLength={255}
            autoComplete="off"
            value={subject}
            onChange={(event) => setSubject(event.target.value)}
          />
        )}
      </Field>
      <Field label="Type">
        {(control) => (
          <select
            {...control}
            className="input"
            value={schemaType}
            onChange={(event) => setSchemaType(event.target.value as SchemaType)}
          >
            {SCHEMA_TYPES.map((type) => (
              <option key={type} value={type}>
                {type === "JSON" ? "JSON Schema" : type === "AVRO" ? "Avro" : "Protobuf"}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Schema">
        {(control) => (
          <textarea
            {...control}
            className="input mono"
            required
            rows={10}
            spellCheck={false}
            value={schema}
            onChange={(event) => setSchema(event.target.value)}
          />
        )}
      </Field>
      <FormError message={register.isError ? describeError(register.error) : null} />
      <FormActions submitLabel="Register version 1" pending={register.isPending} onCancel={onCancel} />
    </form>
  );
}
