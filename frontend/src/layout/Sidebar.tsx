import { NavLink } from "react-router";

import { NAV_ITEMS } from "./navigation";

export function Sidebar() {
  return (
    <nav className="sidebar" aria-label="Main">
      <div className="sidebar__brand">Kafka console</div>
      <ul className="sidebar__list">
        {NAV_ITEMS.map((item) => (
          <li key={item.path}>
            <NavLink
              to={item.path}
              end={item.path === "/"}
              className={({ isActive }) => (isActive ? "sidebar__link sidebar__link--active" : "sidebar__link")}
            >
              {item.label}
            </NavLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}
