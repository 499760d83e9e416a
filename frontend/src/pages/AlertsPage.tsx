import { NavLink, useParams } from "react-router";

import { PageHeader } from "../components/PageHeader";
import { NotFoundPage } from "./NotFoundPage";
import { ActiveAlertsTab } from "./alerts/ActiveAlertsTab";
import { ChannelsTab } from "./alerts/ChannelsTab";
import { HistoryTab } from "./alerts/HistoryTab";
import { RulesTab } from "./alerts/RulesTab";
import { SilencesTab } from "./alerts/SilencesTab";

const TABS = [
  { path: "", label: "Active", Component: ActiveAlertsTab },
  { path: "history", label: "History", Component: HistoryTab },
  { path: "rules", label: "Rules", Component: RulesTab },
  { path: "silences", label: "Silences", Component: SilencesTab },
  { path: "channels", label: "Channels", Component: ChannelsTab },
] as const;

/** Lag alerts: `/alerts` (active), `/alerts/history`, `/alerts/rules`, `/alerts/silences`, `/alerts/channels`. */
export function AlertsPage() {
  const { tab = "" } = useParams();
  const current = TABS.find((each) => each.path === tab);
  if (current === undefined) return <NotFoundPage />;
  return (
    <>
      <PageHeader
        title="Alerts"
        description="Consumer-lag alerts of your teams: what is firing, the rules behind it, silences and where notices go."
      />
      <nav className="tabs" aria-label="Alerts">
        {TABS.map((each) => (
          <NavLink key={each.path} to={each.path ? `/alerts/${each.path}` : "/alerts"} end className="tabs__tab">
            {each.label}
          </NavLink>
        ))}
      </nav>
      <current.Component />
    </>
  );
}
