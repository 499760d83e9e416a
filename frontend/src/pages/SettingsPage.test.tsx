import { configure, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { Timestamp } from "../components/Timestamp";
import { stubFetch } from "../test/fetchStub";
import { renderApp, renderWithQueryClient } from "../test/renderApp";
import { membership, page, payments, signedInHandlers } from "../test/tenancyFixtures";

// The machine running the suite is shared and slow at times; pages wait on several requests.
configure({ asyncUtilTimeout: 10_000 });

function stubSettings() {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", "developer")] }),
    "GET /api/v1/teams/": page([payments]),
  });
}

describe("SettingsPage", { timeout: 30_000 }, () => {
  it("shows the profile, team roles and where the API is documented", async () => {
    stubSettings();
    renderApp("/settings");
    const profile = await screen.findByRole("region", { name: "Profile" });
    expect(within(profile).getByText("me@example.com")).toBeInTheDocument();
    expect(await within(profile).findByText("Payments: Developer")).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Swagger UI" })).toHaveAttribute("href", "/api/docs/");
  });

  it("stores the timezone in this browser, and timestamps follow it", async () => {
    stubSettings();
    const { user } = renderApp("/settings");

    const zone = await screen.findByLabelText("Time zone");
    await user.selectOptions(zone, "Asia/Tokyo");
    expect(window.localStorage.getItem("console.timeZone")).toBe("Asia/Tokyo");
    expect(screen.getByText(/Times show like this:/)).toHaveTextContent(/GMT\+9|JST/);

    renderWithQueryClient(<Timestamp value="2026-01-05T10:00:00Z" />);
    // 10:00 UTC is 19:00 in Tokyo.
    expect(document.querySelector('time[datetime="2026-01-05T10:00:00.000Z"]')).toHaveTextContent(/19:00|07:00:00 PM/);

    await user.selectOptions(zone, "");
    expect(window.localStorage.getItem("console.timeZone")).toBeNull();
  });

  it("switches between light, dark and the system theme", async () => {
    stubSettings();
    const { user } = renderApp("/settings");

    const system = await screen.findByRole("radio", { name: "Follow the system" });
    expect(system).toBeChecked();
    await user.click(screen.getByRole("radio", { name: "Dark" }));
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(window.localStorage.getItem("console.theme")).toBe("dark");
    // The top bar's toggle follows the choice.
    expect(screen.getByRole("button", { name: "Light mode" })).toBeInTheDocument();
    await user.click(system);
    expect(document.documentElement.dataset.theme).toBeUndefined();
    expect(window.localStorage.getItem("console.theme")).toBeNull();
  });
});
