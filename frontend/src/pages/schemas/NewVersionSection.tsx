import { useState, type FormEvent } from "react";

import { describeError } from "../../api/errors";
import { useRegisterSchema, useTestCompatibility } from "../../api/hooks/schemas";
import type { CompatibilityResult, SchemaType } from "../../api/schemaRegistry";
import { Field } from "../../components/Field";

const SCHEMA_TYPES: readonly SchemaType[] = ["AVRO", "JSON", "PROTOBUF"];

interface NewVersionProps {
  cluster: number;
  subject: string;
  /** The latest version's type, offered first. */
  schemaType: SchemaType;
  canRegister: boolean;
}

interface TestedInput {
  schema: string;
  schemaType: SchemaType;
  result: CompatibilityResult;
}

function CompatibilityVerdict({ result }: { result: CompatibilityResult }) {
  return (
    <div role="status" className={result.is_compatible ? "compat-result--ok" : "compat-result--bad"}>
      <p>
        <strong>{result.is_compatible ? "Compatible" : "Not compatible"}</strong> with the latest version.
      </p>
      {result.messages && result.messages.length > 0 ? (
        <ul aria-label="Compatibility messages">
          {result.messages.map((message, index) => (
            <li key={index} className="mono">
              {message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/**
 * Test a pasted schema against the latest version, then register it. The
 * register button waits for a passing test of exactly the text in the box.
 */
export function NewVersionSection({ cluster, subject, schemaType: initialType, canRegister }: NewVersionProps) {
  const [schema, setSchema] = useState("");
  const [schemaType, setSchemaType] = useState<SchemaType>(initialType);
  const [tested, setTested] = useState<TestedInput | null>(null);
  const [registered, setRegistered] = useState<number | null>(null);
  const test = useTestCompatibility(cluster, subject);
  const register = useRegisterSchema(cluster, subject);
  const input = { schema, schemaType };
  const testIsCurrent = tested !== null && tested.schema === schema && tested.schemaType === schemaType;
  const mayRegister = canRegister && testIsCurrent && tested.result.is_compatible && !register.isPending;

  function runTest(event: FormEvent) {
    event.preventDefault();
    setRegistered(null);
    register.reset();
    test.mutate(input, { onSuccess: (result) => setTested({ ...input, result }) });
  }

  return (
    <section className="section" aria-labelledby="new-version-heading">
      <h2 id="new-version-heading" className="section__title">
        {canRegister ? "Test and register a new version" : "Test compatibility"}
      </h2>
      <form onSubmit={runTest} noValidate>
        <Field label="Schema type">
          {(control) => (
            <select
              {...control}
              className="input"
              value={schemaType}
              onChange={(event) => setSchemaType(event.target.value as SchemaType)}
            >
              {SCHEMA_TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="New schema" hint="Paste the schema text; it is tested against the latest version.">
          {(control) => (
            <textarea
              {...control}
              className="input mono"
              rows={10}
              spellCheck={false}
              value={schema}
              onChange={(event) => setSchema(event.target.value)}
            />
          )}
        </Field>
        <div className="dialog__actions">
          <button type="submit" className="button" disabled={!schema.trim() || test.isPending}>
            {test.isPending ? "Testing…" : "Test compatibility"}
          </button>
          {canRegister ? (
            <button
              type="button"
              className="button button--primary"
              disabled={!mayRegister}
              title={mayRegister ? undefined : "Test the schema first; only a compatible schema can be registered."}
              onClick={() =>
                register.mutate(input, {
                  onSuccess: (answer) => {
                    setRegistered(answer.id);
                    setSchema("");
                    setTested(null);
                  },
                })
              }
            >
              Register version
            </button>
          ) : null}
        </div>
      </form>
      {test.isError ? (
        <p className="form-error" role="alert">
          {describeError(test.error)}
        </p>
      ) : null}
      {testIsCurrent ? <CompatibilityVerdict result={tested.result} /> : null}
      {register.isError ? (
        <p className="form-error" role="alert">
          {describeError(register.error)}
        </p>
      ) : null}
      {registered !== null ? <p role="status">Registered as schema id {registered}.</p> : null}
    </section>
  );
}
