import { useId, type ReactNode } from "react";

export interface FieldControlProps {
  id: string;
  "aria-invalid": boolean;
  "aria-describedby": string | undefined;
}

interface FieldProps {
  label: string;
  hint?: ReactNode;
  /** The server's (or the form's) message for this field. */
  error?: string;
  children: (control: FieldControlProps) => ReactNode;
}

/** A labelled form control with its hint and error tied to it for screen readers. */
export function Field({ label, hint, error, children }: FieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={id} className="field__label">
        {label}
      </label>
      {children({ id, "aria-invalid": Boolean(error), "aria-describedby": describedBy })}
      {hint ? (
        <p id={hintId} className="field__hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={errorId} className="field__error">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** The message for the whole form, if any. */
export function FormError({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p className="form-error" role="alert">
      {message}
    </p>
  );
}

interface FormActionsProps {
  submitLabel: string;
  /** Set while the request runs, so the form cannot be sent twice. */
  pending: boolean;
  onCancel: () => void;
}

/** A dialog form's Cancel and submit buttons. */
export function FormActions({ submitLabel, pending, onCancel }: FormActionsProps) {
  return (
    <div className="dialog__actions">
      <button type="button" className="button" onClick={onCancel}>
        Cancel
      </button>
      <button type="submit" className="button button--primary" disabled={pending}>
        {submitLabel}
      </button>
    </div>
  );
}
