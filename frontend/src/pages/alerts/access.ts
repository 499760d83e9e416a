import { useAccess } from "../../api/hooks/access";
import { useTeams } from "../../api/hooks/teams";
import type { Team } from "../../api/types";
import { hasRole, roleInTeam } from "../../auth/permissions";

/** The teams whose alert rules, silences and channels the person may change (developers and up). */
export function useManageableTeams(): Team[] {
  const teams = useTeams();
  const access = useAccess();
  if (!access.data || !teams.data) return [];
  const accessData = access.data;
  return teams.data.filter((team) => hasRole(roleInTeam(accessData, team), "developer"));
}
