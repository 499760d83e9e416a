import { useState } from "react";

import { describeError } from "../../api/errors";
import { useDeleteSchema, useDeletedVersions } from "../../api/hooks/schemas";
import { ConfirmDialog } from "../../components/ConfirmDialog";

interface SubjectLifecycleProps {
  cluster: number;
  subject: string;
  /** Live versions; empty once the whole subject is soft-deleted. */
  versions: number[];
}

interface Pending {
  version: number | null;
  permanent: boolean;
}

function describe({ version, permanent }: Pending, subject: string): { title: string; text: string } {
  const what = version === null ? `the subject ${subject}` : `version ${version} of ${subject}`;
  return permanent
    ? {
        title: `Permanently delete ${what}?`,
        text: "The schema text and its ids go for good; producers and consumers that still use those ids can no longer decode with them.",
      }
    : {
        title: `Delete ${what}?`,
        text: "A soft delete, as in Confluent's registry: hidden from lists and from new registrations, still readable by id, and can be deleted permanently afterwards.",
      };
}

/**
 * Soft and hard deletes with Confluent's rule: a version or subject is
 * deleted permanently only after a soft delete, so the section offers the
 * permanent delete only for what is already soft-deleted.
 */
export function SubjectLifecycleSection({ cluster, subject, versions }: SubjectLifecycleProps) {
  const deleted = useDeletedVersions(cluster, subject);
  const remove = useDeleteSchema(cluster, subject);
  const [pending, setPending] = useState<Pending | null>(null);
  const softDeleted = deleted.data ?? [];
  const text = pending ? describe(pending, subject) : null;

  return (
    <section className="section" aria-labelledby="subject-lifecycle">
      <h2 id="subject-lifecycle" className="section__title">
        Delete versions or the subject
      </h2>
      {versions.length > 0 ? (
        <div className="actions actions--wrap" role="group" aria-label="Live versions">
          {versions.map((version) => (
            <button
              key={version}
              type="button"
              className="button"
              onClick={() => setPending({ version, permanent: false })}
            >
              Delete version {version}
            </button>
          ))}
          <button
            type="button"
            className="button button--danger"
            onClick={() => setPending({ version: null, permanent: false })}
          >
            Delete subject
          </button>
        </div>
      ) : null}
      {softDeleted.length > 0 ? (
        <>
          <p className="muted">
            Soft-deleted: {softDeleted.map((version) => `version ${version}`).join(", ")}. They can be deleted
            permanently.
          </p>
          <div className="actions actions--wrap" role="group" aria-label="Soft-deleted versions">
            {softDeleted.map((version) => (
              <button
                key={version}
                type="button"
                className="button button--danger"
                onClick={() => setPending({ version, permanent: true })}
              >
                Permanently delete version {version}
              </button>
            ))}
            {versions.length === 0 ? (
              <button
                type="button"
                className="button button--danger"
                onClick={() => setPending({ version: null, permanent: true })}
              >
                Permanently delete subject
              </button>
            ) : null}
          </div>
        </>
      ) : null}
      {deleted.isError ? (
        <p className="form-error" role="alert">
          {describeError(deleted.error)}
        </p>
      ) : null}
      <ConfirmDialog
        open={pending !== null}
        title={text?.title ?? ""}
        description={text?.text}
        confirmationText={pending?.version === null ? subject : `version ${pending?.version ?? ""}`}
        confirmLabel={pending?.permanent ? "Delete permanently" : "Delete"}
        pending={remove.isPending}
        error={remove.isError ? describeError(remove.error) : null}
        onCancel={() => {
          remove.reset();
          setPending(null);
        }}
        onConfirm={() => pending && remove.mutate(pending, { onSuccess: () => setPending(null) })}
      />
    </section>
  );
}
