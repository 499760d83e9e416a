import { Link } from "react-router";

import { useLogout, useSession } from "../api/hooks/session";
import { describeError } from "../api/errors";
import { useTheme } from "../theme/theme";

export function TopBar() {
  const session = useSession();
  const logout = useLogout();
  const { theme, toggleTheme } = useTheme();
  const username = session.data?.user?.username;

  return (
    <header className="topbar">
      <div className="topbar__spacer" />
      {logout.isError ? (
        <span className="form-error" role="alert">
          {describeError(logout.error)}
        </span>
      ) : null}
      <button type="button" className="button button--quiet" onClick={toggleTheme}>
        {theme === "dark" ? "Light mode" : "Dark mode"}
      </button>
      {username ? (
        <Link className="topbar__user" to="/profile" title="Your profile">
          {username}
        </Link>
      ) : null}
      {/* The auth guard notices the signed-out session and goes to the login page. */}
      <button type="button" className="button" onClick={() => logout.mutate()} disabled={logout.isPending}>
        Sign out
      </button>
    </header>
  );
}
