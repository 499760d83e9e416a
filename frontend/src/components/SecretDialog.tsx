import { CopyField } from "./CopyField";
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
  return (
    <Dialog open={secret !== null} title={title} onClose={onClose}>
      <p className="callout callout--warning">
        Copy this secret now. <strong>You won’t see it again</strong>: only a hash of it is stored.
      </p>
      <CopyField label="Secret" value={secret ?? ""} />
      <div className="dialog__actions">
        <button type="button" className="button button--primary" onClick={onClose}>
          I have saved it
        </button>
      </div>
    </Dialog>
  );
}
