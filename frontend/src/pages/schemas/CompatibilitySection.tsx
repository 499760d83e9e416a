import { useId, useState } from "react";

import { describeError } from "../../api/errors";
import { useSetCompatibility, useSubjectConfig } from "../../api/hooks/schemas";
import { COMPATIBILITY_LEVELS, type CompatibilityLevel } from "../../api/schemaRegistry";
import { QueryView } from "../../components/states";

interface CompatibilityProps {
  cluster: number;
  subject: string;
  canEdit: boolean;
}

/** The subject's compatibility level (its own, or the registry's default) and, for writers, a way to change it. */
export function CompatibilitySection({ cluster, subject, canEdit }: CompatibilityProps) {
  const config = useSubjectConfig(cluster, subject);
  return (
    <section className="section" aria-labelledby="compatibility-heading">
      <h2 id="compatibility-heading" className="section__title">
        Compatibility
      </h2>
      <QueryView query={config} errorTitle="Could not load the compatibility level">
        {(data) => (
          <CompatibilityEditor
            key={data.compatibilityLevel ?? ""}
            cluster={cluster}
            subject={subject}
            level={data.compatibilityLevel ?? "BACKWARD"}
            canEdit={canEdit}
          />
        )}
      </QueryView>
    </section>
  );
}

function CompatibilityEditor({ cluster, subject, level, canEdit }: CompatibilityProps & { level: CompatibilityLevel }) {
  const selectId = useId();
  const [choice, setChoice] = useState<CompatibilityLevel>(level);
  const save = useSetCompatibility(cluster, subject);
  return (
    <>
      <p>
        New versions must be <strong className="mono">{level}</strong> compatible with earlier ones.
      </p>
      {canEdit ? (
        <form
          className="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            save.mutate(choice);
          }}
        >
          <div className="field">
            <label htmlFor={selectId} className="field__label">
              Compatibility level
            </label>
            <select
              id={selectId}
              className="input"
              value={choice}
              onChange={(event) => setChoice(event.target.value as CompatibilityLevel)}
            >
              {COMPATIBILITY_LEVELS.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" className="button" disabled={choice === level || save.isPending}>
            Save level
          </button>
        </form>
      ) : null}
      {save.isError ? (
        <p className="form-error" role="alert">
          {describeError(save.error)}
        </p>
      ) : null}
    </>
  );
}
