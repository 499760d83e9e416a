import type { Person, PersonStatus } from "../../api/types";
import { Timestamp } from "../../components/Timestamp";

export const STATUS_LABELS: Record<PersonStatus, string> = {
  active: "Active",
  invited: "Invited",
  deactivated: "Deactivated",
};

export const SOURCE_LABELS: Record<Person["identity_source"], string> = {
  local: "Password",
  oidc: "Single sign-on",
};

const STATUS_CLASS: Record<PersonStatus, string> = {
  active: "badge badge--ok",
  invited: "badge badge--info",
  deactivated: "badge badge--danger",
};

/** The person's status, and until when an open invitation or reset link works. */
export function PersonStatusBadge({ person }: { person: Person }) {
  const link = person.pending_link;
  return (
    <span>
      <span className={STATUS_CLASS[person.status]}>{STATUS_LABELS[person.status]}</span>
      {link ? (
        <>
          <br />
          <span className="muted">
            {link.purpose === "invite" ? "Invite link" : "Reset link"} expires{" "}
            <Timestamp value={link.expires_at} relative />
          </span>
        </>
      ) : null}
    </span>
  );
}
