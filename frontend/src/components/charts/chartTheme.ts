import { useEffect, useState } from "react";

/** Colours a chart reads from the stylesheet, so it follows light and dark mode. */
export interface ChartTheme {
  text: string;
  muted: string;
  grid: string;
  surface: string;
  palette: readonly string[];
}

// Distinct in both themes; the first is close to the console's accent.
const LIGHT_PALETTE = ["#2f5fd0", "#d0632f", "#1f9d6b", "#a63fc0", "#c49a00", "#1b8fb5", "#c4322b", "#5b6470"];
const DARK_PALETTE = ["#7aa2ff", "#ff9e64", "#4fd1a1", "#d68cf0", "#f0c94a", "#5ccfe6", "#ff7b72", "#9aa3af"];

function cssVariable(name: string, fallback: string): string {
  const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return value || fallback;
}

function isDark(): boolean {
  const chosen = document.documentElement.dataset.theme;
  if (chosen === "dark" || chosen === "light") return chosen === "dark";
  return typeof window.matchMedia === "function" && window.matchMedia("(prefers-color-scheme: dark)").matches;
}

export function readChartTheme(): ChartTheme {
  const dark = isDark();
  return {
    text: cssVariable("--text", dark ? "#e6e9ee" : "#1b1f24"),
    muted: cssVariable("--text-muted", dark ? "#9aa3af" : "#5b6470"),
    grid: cssVariable("--border", dark ? "#2f3640" : "#d9dde3"),
    surface: cssVariable("--surface", dark ? "#1a1e24" : "#ffffff"),
    palette: dark ? DARK_PALETTE : LIGHT_PALETTE,
  };
}

/** The chart theme, re-read when the user toggles the theme or the system switches. */
export function useChartTheme(): ChartTheme {
  const [theme, setTheme] = useState(readChartTheme);
  useEffect(() => {
    const update = () => setTheme(readChartTheme());
    // The toggle sets data-theme on <html>; the system setting arrives through matchMedia.
    const observer = new MutationObserver(update);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    const media = typeof window.matchMedia === "function" ? window.matchMedia("(prefers-color-scheme: dark)") : null;
    media?.addEventListener("change", update);
    return () => {
      observer.disconnect();
      media?.removeEventListener("change", update);
    };
  }, []);
  return theme;
}
