import { screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { json, requestsOf, signedIn, signedOut, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";

describe("LoginPage", () => {
  it("shows the server's message when the credentials are rejected", async () => {
    document.cookie = "csrftoken=token-from-django";
    const fetchSpy = stubFetch({
      "GET /api/v1/auth/session/": json(200, signedOut),
      "POST /api/v1/auth/login/": json(400, {
        error: { code: "invalid_credentials", message: "The username or password is not correct.", details: {} },
      }),
    });
    const { user, router } = renderApp("/login");

    await user.type(await screen.findByLabelText("Username"), "ada");
    await user.type(screen.getByLabelText("Password"), "wrong-password");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    expect(await screen.findByRole("alert")).toHaveTextContent("The username or password is not correct.");
    expect(router.state.location.pathname).toBe("/login");

    const login = requestsOf(fetchSpy).find((request) => request.method === "POST");
    expect(login?.headers.get("X-CSRFToken")).toBe("token-from-django");
    expect(login?.headers.get("Content-Type")).toBe("application/json");
    expect(await login?.json()).toEqual({ username: "ada", password: "wrong-password" });
  });

  it("signs in and goes to the page named by next", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedOut),
      "POST /api/v1/auth/login/": json(200, { user: signedIn.user }),
    });
    const { user, router } = renderApp("/login?next=%2Ftopics");

    await user.type(await screen.findByLabelText("Username"), "ada");
    await user.type(screen.getByLabelText("Password"), "correct horse");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    expect(await screen.findByRole("heading", { level: 1, name: "Topics" })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/topics");
    expect(screen.getByText("ada")).toBeInTheDocument();
  });

  it("ignores a next that points to another site", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedOut),
      "POST /api/v1/auth/login/": json(200, { user: signedIn.user }),
      "GET /api/v1/overview/": json(200, { version: "1", worker: { alive: true, last_heartbeat: null } }),
    });
    const { user, router } = renderApp("/login?next=%2F%2Fevil.example%2F");

    await user.type(await screen.findByLabelText("Username"), "ada");
    await user.type(screen.getByLabelText("Password"), "correct horse");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    await waitFor(() => expect(router.state.location.pathname).toBe("/"));
    expect(await screen.findByRole("heading", { level: 1, name: "Overview" })).toBeInTheDocument();
  });

  it("sends an already signed-in visitor on to next", async () => {
    stubFetch({ "GET /api/v1/auth/session/": json(200, signedIn) });
    const { router } = renderApp("/login?next=%2Facls");

    expect(await screen.findByRole("heading", { level: 1, name: "ACLs" })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/acls");
  });

  it("offers single sign-on with the provider's name, keeping next, and shows its refusal", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedOut),
      "GET /api/v1/auth/options/": json(200, {
        sso: { name: "Keycloak", login_url: "/api/v1/auth/oidc/login/" },
        local_login: true,
      }),
    });
    renderApp("/login?next=%2Ftopics&sso_error=Your%20account%20is%20deactivated%20here.");

    const button = await screen.findByRole("link", { name: "Sign in with Keycloak" });
    expect(button).toHaveAttribute("href", "/api/v1/auth/oidc/login/?next=%2Ftopics");
    expect(screen.getByRole("alert")).toHaveTextContent("Your account is deactivated here.");
    expect(screen.getByLabelText("Username")).toBeInTheDocument();
  });

  it("hides the password form when configured, except on the break-glass path", async () => {
    stubFetch({
      "GET /api/v1/auth/session/": json(200, signedOut),
      "GET /api/v1/auth/options/": json(200, {
        sso: { name: "Okta", login_url: "/api/v1/auth/oidc/login/" },
        local_login: false,
      }),
    });
    const { user } = renderApp("/login");

    expect(await screen.findByRole("link", { name: "Sign in with Okta" })).toBeInTheDocument();
    expect(screen.queryByLabelText("Username")).not.toBeInTheDocument();
    await user.click(screen.getByRole("link", { name: "Administrator sign-in" }));
    expect(await screen.findByLabelText("Username")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Sign in" })).toBeInTheDocument();
  });
});
