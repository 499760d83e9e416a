import { useAccess } from "../../api/hooks/access";
import { useOrganizations } from "../../api/hooks/organizations";
import type { Organization } from "../../api/types";
import { isOrgAdmin } from "../../auth/permissions";

/** The organizations where the signed-in person may create and register clusters (org admins only). */
export function useAdministeredOrganizations(): Organization[] {
  const access = useAccess();
  const organizations = useOrganizations();
  if (!access.data || !organizations.data) return [];
  const accessData = access.data;
  return organizations.data.filter((organization) => isOrgAdmin(accessData, organization.id));
}
