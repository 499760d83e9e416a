import { useId, useRef, type ReactNode } from "react";
import { createPortal } from "react-dom";

import { useModal } from "./useModal";

interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** A drawer slides in from the right and suits reading details beside a list. */
  variant?: "dialog" | "drawer";
}

/**
 * A modal: focus moves into it, stays in it and goes back to whatever opened
 * it; Escape and a click outside close it (see useModal). Forms and read-only
 * panels both use it.
 */
export function Dialog(props: DialogProps) {
  if (!props.open) return null;
  return createPortal(<DialogContent {...props} />, document.body);
}

function DialogContent({ title, onClose, children, variant = "dialog" }: DialogProps) {
  const titleId = useId();
  const panelRef = useRef<HTMLDivElement>(null);

  useModal(panelRef, onClose);

  return (
    <div
      className={`dialog-backdrop dialog-backdrop--${variant}`}
      onMouseDown={(event) => event.target === event.currentTarget && onClose()}
    >
      <div
        ref={panelRef}
        className={variant === "drawer" ? "drawer" : "dialog"}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        tabIndex={-1}
      >
        <div className="dialog__header">
          <h2 id={titleId} className="dialog__title">
            {title}
          </h2>
          <button type="button" className="button button--quiet" data-dialog-close onClick={onClose} aria-label="Close">
            ×
          </button>
        </div>
        {children}
      </div>
    </div>
  );
}
