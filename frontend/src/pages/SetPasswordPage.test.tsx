import { screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";

import { json, requestsOf, signedIn, signedOut, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { tokenFromHash } from "./SetPasswordPage";

const invalid = {
  error: { code: "invalid_link", message: "This link is not valid: it has expired.", details: {} },
};

describe("SetPasswordPage", () => {
  afterEach(() => {
    window.location.hash = "";
  });

  it("reads the token from the fragment only", () => {
    expect(tokenFromHash("#token=abc-_1")).toBe("abc-_1");
    expect(tokenFromHash("")).toBe("");
  });

  it("sets the password and goes on into the console signed in", async () => {
    window.location.hash = "#token=tok123";
    let passwordSet = false;
    stubFetch(
      {
        "GET /api/v1/auth/session/": () => json(200, passwordSet ? signedIn : signedOut),
        "POST /api/v1/auth/password-links/inspect/": json(200, {
          username: "nina",
          purpose: "invite",
          expires_at: "2026-01-05T10:00:00Z",
        }),
        "POST /api/v1/auth/password-links/use/": () => {
          passwordSet = true;
          return { status: 204 };
        },
      },
      // The console's pages behind the sign-in: whatever they ask, nothing.
      json(200, { count: 0, next: null, previous: null, results: [] }),
    );
    const { router, user } = renderApp("/set-password");

    expect(await screen.findByText(/Welcome, nina/)).toBeInTheDocument();
    await user.type(screen.getByLabelText("New password"), "correct horse battery");
    await user.type(screen.getByLabelText("Repeat it"), "correct horse battery");
    await user.click(screen.getByRole("button", { name: "Set password" }));

    await waitFor(() => expect(router.state.location.pathname).toBe("/"));
    expect(screen.queryByRole("link", { name: "Sign in" })).not.toBeInTheDocument();
  });

  it("sets the password and offers to sign in where password sign-in is turned off", async () => {
    window.location.hash = "#token=tok123";
    const spy = stubFetch({
      "GET /api/v1/auth/session/": json(200, signedOut),
      "POST /api/v1/auth/password-links/inspect/": json(200, {
        username: "nina",
        purpose: "invite",
        expires_at: "2026-01-05T10:00:00Z",
      }),
      "POST /api/v1/auth/password-links/use/": { status: 204 },
    });
    const { user } = renderApp("/set-password");

    expect(await screen.findByText(/Welcome, nina/)).toBeInTheDocument();
    await user.type(screen.getByLabelText("New password"), "correct horse battery");
    await user.type(screen.getByLabelText("Repeat it"), "correct horse battery");
    await user.click(screen.getByRole("button", { name: "Set password" }));

    expect(await screen.findByRole("link", { name: "Sign in" })).toHaveAttribute("href", "/login");
    const use = requestsOf(spy).find((request) => request.url.endsWith("/password-links/use/"));
    expect(await use?.json()).toEqual({ token: "tok123", password: "correct horse battery" });
  });

  it("refuses two different passwords without sending them", async () => {
    window.location.hash = "#token=tok123";
    const spy = stubFetch({
      "GET /api/v1/auth/session/": json(200, signedOut),
      "POST /api/v1/auth/password-links/inspect/": json(200, {
        username: "nina",
        purpose: "reset",
        expires_at: "2026-01-05T10:00:00Z",
      }),
    });
    const { user } = renderApp("/set-password");

    await user.type(await screen.findByLabelText("New password"), "correct horse battery");
    await user.type(screen.getByLabelText("Repeat it"), "correct horse batter");
    await user.click(screen.getByRole("button", { name: "Set password" }));

    expect(screen.getByRole("alert")).toHaveTextContent("The two passwords differ.");
    expect(requestsOf(spy).some((request) => request.url.endsWith("/use/"))).toBe(false);
  });

  it("says why an expired or used link does not work", async () => {
    window.location.hash = "#token=old";
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedOut),
      "POST /api/v1/auth/password-links/inspect/": json(400, invalid),
    });
    renderApp("/set-password");

    expect(await screen.findByRole("alert")).toHaveTextContent("This link is not valid");
  });
});
