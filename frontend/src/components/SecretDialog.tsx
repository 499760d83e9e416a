import { useId, useState } from "react";

import { Dialog } from "./Dialog";

interface SecretDialogProps {
  /** The key's full secret, or null when there is nothing to show. */
  secret: string | null;
  title: string;
  onClose: () => void;
}

/**
 * Shows a new API key's secret the one time the server sends it. Closing the
 * dialog drops it: the server keeps only a hash, so it cannot be shown again.
 */
export function SecretDialog({ secret, title, onClose }: SecretDialogProps) {
  const secretId = useId();
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");

  async function copySecret(value: string) {
    try {
      await navigator.clipboard.writeText(value);
      setCopy("copied");
    } catch {
      setCopy("failed");
    }
  }

  return (
    <Dialog open={secret !== null} title={title} onClose={onClose}>
      <p className="callout callout--warning">
        Copy this secret now. <strong>You won’t see it again</strong>: only a hash of it is stored.
      </p>
      <label htmlFor={secretId} className="field__label">
        Secret
      </label>
      <div className="secret">
        <input
          id={secretId}
          className="input mono secret__value"
          readOnly
          value={secret ?? ""}
          onFocus={(e) => e.target.select()}
        />
        <button type="button" className="button" onClick={() => secret && void copySecret(secret)}>
          {copy === "copied" ? "Copied" : "Copy"}
        </button>
      </div>
      <p className="muted" role="status">
        {copy === "copied"
          ? "Copied to the clipboard."
          : copy === "failed"
            ? "Could not copy; select the text and copy it."
            : ""}
      </p>
      <div className="dialog__actions">
        <button type="button" className="button button--primary" onClick={onClose}>
          I have saved it
        </button>
      </div>
    </Dialog>
  );
}
