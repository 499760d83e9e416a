import { Outlet, useNavigation } from "react-router";

import { RequireAuth } from "../auth/RequireAuth";
import { Sidebar } from "./Sidebar";
import { TopBar } from "./TopBar";

export function AppLayout() {
  const navigation = useNavigation();
  return (
    <RequireAuth>
      <div className="shell">
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <Sidebar />
        <div className="shell__body">
          <TopBar />
          {navigation.state === "loading" ? <div className="route-progress" aria-hidden="true" /> : null}
          <main id="main" className="content" tabIndex={-1}>
            <Outlet />
          </main>
        </div>
      </div>
    </RequireAuth>
  );
}
