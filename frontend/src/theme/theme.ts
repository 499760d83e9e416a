import { useCallback, useEffect, useState } from "react";

export type Theme = "light" | "dark";

const STORAGE_KEY = "console.theme";
const DARK_QUERY = "(prefers-color-scheme: dark)";

function storedTheme(): Theme | null {
  try {
    const value = window.localStorage.getItem(STORAGE_KEY);
    return value === "light" || value === "dark" ? value : null;
  } catch {
    // Storage can be blocked (private mode, policies); fall back to the system.
    return null;
  }
}

function systemTheme(): Theme {
  return typeof window.matchMedia === "function" && window.matchMedia(DARK_QUERY).matches ? "dark" : "light";
}

/** Until someone picks a theme the CSS follows the system through prefers-color-scheme. */
export function applyStoredTheme(): void {
  const theme = storedTheme();
  if (theme) document.documentElement.dataset.theme = theme;
}

/** A theme, or "system" to follow the operating system's setting. */
export type ThemePreference = Theme | "system";
/** Fired on window when the settings page changes the preference, so the top bar's toggle follows. */
const THEME_CHANGE_EVENT = "console:theme-change";

export function themePreference(): ThemePreference {
  return storedTheme() ?? "system";
}

export function setThemePreference(preference: ThemePreference): void {
  try {
    if (preference === "system") window.localStorage.removeItem(STORAGE_KEY);
    else window.localStorage.setItem(STORAGE_KEY, preference);
  } catch {
    // The choice then lasts only for this page load.
  }
  if (preference === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = preference;
  window.dispatchEvent(new Event(THEME_CHANGE_EVENT));
}

export function useTheme(): { theme: Theme; toggleTheme: () => void } {
  const [theme, setTheme] = useState<Theme>(() => storedTheme() ?? systemTheme());

  useEffect(() => {
    const changed = () => setTheme(storedTheme() ?? systemTheme());
    window.addEventListener(THEME_CHANGE_EVENT, changed);
    return () => window.removeEventListener(THEME_CHANGE_EVENT, changed);
  }, []);

  useEffect(() => {
    if (storedTheme() || typeof window.matchMedia !== "function") return;
    const query = window.matchMedia(DARK_QUERY);
    const follow = () => setTheme(query.matches ? "dark" : "light");
    query.addEventListener("change", follow);
    return () => query.removeEventListener("change", follow);
  }, []);

  const toggleTheme = useCallback(() => {
    const next: Theme = theme === "dark" ? "light" : "dark";
    document.documentElement.dataset.theme = next;
    try {
      window.localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // The choice then lasts only for this page load.
    }
    setTheme(next);
  }, [theme]);

  return { theme, toggleTheme };
}
