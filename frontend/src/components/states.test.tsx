import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";

import { ApiError } from "../api/errors";
import { EmptyState, ErrorState, LoadingState, QueryView } from "./states";

function query<T>(state: Partial<{ data: T; error: unknown; isPending: boolean; isError: boolean }>) {
  return { data: undefined, error: null, isPending: false, isError: false, refetch: vi.fn(), ...state };
}

describe("state components", () => {
  it("announces loading politely", () => {
    render(<LoadingState label="Loading topics…" />);
    expect(screen.getByRole("status")).toHaveTextContent("Loading topics…");
  });

  it("renders an empty state with its action", () => {
    render(
      <EmptyState title="No topics yet" description="Create one to start." action={<button>Create topic</button>} />,
    );
    expect(screen.getByText("No topics yet")).toBeInTheDocument();
    expect(screen.getByText("Create one to start.")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Create topic" })).toBeInTheDocument();
  });

  it("renders an error's message and retries on request", async () => {
    const retry = vi.fn();
    render(<ErrorState error={new ApiError(503, "unavailable", "The cluster is not reachable.")} onRetry={retry} />);

    expect(screen.getByRole("alert")).toHaveTextContent("The cluster is not reachable.");
    await userEvent.click(screen.getByRole("button", { name: "Try again" }));
    expect(retry).toHaveBeenCalledOnce();
  });

  it("QueryView shows loading, then error, then empty, then the data", () => {
    const children = (items: string[]) => (
      <ul>
        {items.map((item) => (
          <li key={item}>{item}</li>
        ))}
      </ul>
    );
    const isEmpty = (items: string[]) => items.length === 0;

    const { rerender } = render(<QueryView query={query<string[]>({ isPending: true })}>{children}</QueryView>);
    expect(screen.getByRole("status")).toBeInTheDocument();

    rerender(
      <QueryView
        query={query<string[]>({ isError: true, error: new Error("boom") })}
        errorTitle="Could not load topics"
      >
        {children}
      </QueryView>,
    );
    expect(screen.getByRole("alert")).toHaveTextContent("Could not load topicsboom");

    rerender(
      <QueryView query={query<string[]>({ data: [] })} isEmpty={isEmpty} empty={<EmptyState title="No topics" />}>
        {children}
      </QueryView>,
    );
    expect(screen.getByText("No topics")).toBeInTheDocument();

    rerender(
      <QueryView query={query<string[]>({ data: ["orders"] })} isEmpty={isEmpty}>
        {children}
      </QueryView>,
    );
    expect(screen.getByRole("listitem")).toHaveTextContent("orders");
  });
});
