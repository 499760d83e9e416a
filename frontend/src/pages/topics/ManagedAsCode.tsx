import type { ManagedResource } from "../../api/types";

/** "as code" with the file set and change set that manage a resource; nothing for one managed by clicks. */
export function ManagedAsCodeBadge({ resource }: { resource: ManagedResource | undefined }) {
  if (!resource) return null;
  const where = `File set ${resource.file_set}, change set #${resource.change_set}`;
  return (
    <span className="badge badge--info" title={where} aria-label={`Managed as code: ${where}`}>
      as code · {resource.file_set} #{resource.change_set}
    </span>
  );
}
