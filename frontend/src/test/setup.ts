import "@testing-library/jest-dom/vitest";
import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";

// Lazy pages and their chunks load slower on a busy 2-core CI machine than the 1 s default allows.
configure({ asyncUtilTimeout: 5_000 });

afterEach(() => {
  cleanup();
  for (const cookie of document.cookie.split(";")) {
    const name = cookie.split("=")[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
  window.localStorage.clear();
  delete document.documentElement.dataset.theme;
});
