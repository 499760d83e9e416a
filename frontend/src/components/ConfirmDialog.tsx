import { useId, useRef, useState, type FormEvent, type ReactNode } from "react";
import { createPortal } from "react-dom";

import { useModal } from "./useModal";

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  description?: ReactNode;
  /** The name the person must type to confirm, e.g. the topic's name. */
  confirmationText: string;
  confirmLabel?: string;
  /** Set while the action runs, so it cannot be sent twice. */
  pending?: boolean;
  error?: ReactNode;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * Asks before a destructive action. The confirm button stays disabled until
 * the resource's name is typed exactly, so a stray click cannot delete.
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  if (!props.open) return null;
  return createPortal(<ConfirmDialogContent {...props} />, document.body);
}

function ConfirmDialogContent({
  title,
  description,
  confirmationText,
  confirmLabel = "Delete",
  pending = false,
  error,
  onConfirm,
  onCancel,
}: ConfirmDialogProps) {
  const titleId = useId();
  const inputId = useId();
  const [typed, setTyped] = useState("");
  const inputRef = useRef<HTMLInputElement>(null);
  const matches = typed === confirmationText;

  const panelRef = useRef<HTMLDivElement>(null);
  useModal(panelRef, onCancel, inputRef);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (matches && !pending) onConfirm();
  }

  return (
    <div className="dialog-backdrop" onMouseDown={(event) => event.target === event.currentTarget && onCancel()}>
      <div
        ref={panelRef}
        className="dialog"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby={titleId}
        tabIndex={-1}
      >
        <form onSubmit={submit}>
          <h2 id={titleId} className="dialog__title">
            {title}
          </h2>
          {description ? <div className="dialog__description">{description}</div> : null}
          <label htmlFor={inputId} className="field__label">
            Type <strong className="mono">{confirmationText}</strong> to confirm
          </label>
          <input
            id={inputId}
            ref={inputRef}
            className="input"
            autoComplete="off"
            spellCheck={false}
            value={typed}
            onChange={(event) => setTyped(event.target.value)}
          />
          {error ? (
            <p className="form-error" role="alert">
              {error}
            </p>
          ) : null}
          <div className="dialog__actions">
            <button type="button" className="button" onClick={onCancel}>
              Cancel
            </button>
            <button type="submit" className="button button--danger" disabled={!matches || pending}>
              {confirmLabel}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}
