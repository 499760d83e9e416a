import type { IssuedLink } from "../../api/types";
import { CopyField } from "../../components/CopyField";
import { Dialog } from "../../components/Dialog";
import { Timestamp } from "../../components/Timestamp";

interface PasswordLinkDialogProps {
  issued: { username: string; link: IssuedLink } | null;
  onClose: () => void;
}

/**
 * Shows a one-time link the one time the server sends it: only its hash is
 * kept, so the admin copies it now and passes it on (unless it was e-mailed).
 */
export function PasswordLinkDialog({ issued, onClose }: PasswordLinkDialogProps) {
  const link = issued?.link;
  const invite = link?.purpose === "invite";
  const who = issued?.username ?? "";
  return (
    <Dialog
      open={issued !== null}
      title={invite ? `Invitation for ${who}` : `Password reset link for ${who}`}
      onClose={onClose}
    >
      <p className="callout callout--warning">
        Send this link to {who}
        {link?.emailed ? " (it was also e-mailed to them)" : " yourself"}. <strong>You won’t see it again</strong>. It
        works once, until {link ? <Timestamp value={link.expires_at} /> : null}
        {invite ? "; opening it lets them choose their password." : "; their current password works until it is used."}
      </p>
      <CopyField label="One-time link" value={link?.url ?? ""} />
      <div className="dialog__actions">
        <button type="button" className="button button--primary" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
