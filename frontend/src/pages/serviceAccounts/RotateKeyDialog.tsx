import { useState, type FormEvent } from "react";

import { useRotateApiKey } from "../../api/hooks/apiKeys";
import type { ApiKey, ApiKeyWithSecret } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { Field, FormActions, FormError } from "../../components/Field";
import { formErrorsOf } from "../../lib/formErrors";

/** How long the old key keeps working, so applications can switch without downtime. */
export const OVERLAP_CHOICES: { seconds: number; label: string }[] = [
  { seconds: 0, label: "None: the old key stops now" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 24 * 3600, label: "1 day" },
  { seconds: 7 * 24 * 3600, label: "7 days" },
  { seconds: 30 * 24 * 3600, label: "30 days" },
];

interface RotateKeyDialogProps {
  apiKey: ApiKey | null;
  onClose: () => void;
  onRotated: (key: ApiKeyWithSecret) => void;
}

export function RotateKeyDialog({ apiKey, onClose, onRotated }: RotateKeyDialogProps) {
  return (
    <Dialog open={apiKey !== null} title={`Rotate API key ${apiKey?.name ?? ""}?`} onClose={onClose}>
      {apiKey ? <RotateForm apiKey={apiKey} onCancel={onClose} onRotated={onRotated} /> : null}
    </Dialog>
  );
}

function RotateForm({
  apiKey,
  onCancel,
  onRotated,
}: {
  apiKey: ApiKey;
  onCancel: () => void;
  onRotated: RotateKeyDialogProps["onRotated"];
}) {
  const rotate = useRotateApiKey();
  const [overlap, setOverlap] = useState(3600);
  const errors = formErrorsOf(rotate.error, ["overlap_seconds"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    rotate.mutate({ keyId: apiKey.key_id, overlapSeconds: overlap }, { onSuccess: onRotated });
  }

  return (
    <form onSubmit={submit}>
      <p className="dialog__description">A new secret replaces this key. Choose how long the old one keeps working.</p>
      <Field label="Old key keeps working for" error={errors.fields.overlap_seconds}>
        {(control) => (
          <select {...control} className="input" value={overlap} onChange={(e) => setOverlap(Number(e.target.value))}>
            {OVERLAP_CHOICES.map((choice) => (
              <option key={choice.seconds} value={choice.seconds}>
                {choice.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <FormError message={errors.form} />
      <FormActions submitLabel="Rotate key" pending={rotate.isPending} onCancel={onCancel} />
    </form>
  );
}
