import { configure, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { cluster } from "../test/clusterFixtures";
import { json, requestsOf, stubFetch } from "../test/fetchStub";
import { renderApp } from "../test/renderApp";
import { membership, page, payments, query, signedInHandlers } from "../test/tenancyFixtures";
import { browseResult, message, topicDetail } from "../test/topicFixtures";

// The machine running the suite is shared and slow at times; pages wait on several requests.
configure({ asyncUtilTimeout: 10_000 });

type Handlers = Parameters<typeof stubFetch>[0];

function stubTopic(role: Parameters<typeof membership>[3] = "developer", extra: Handlers = {}) {
  return stubFetch({
    ...signedInHandlers({ teamRoles: [membership(9, 1, "me", role)] }),
    "GET /api/v1/teams/": page([payments]),
    "GET /api/v1/clusters/": page([cluster()]),
    "GET /api/v1/topics/30/": json(200, topicDetail()),
    "GET /api/v1/topics/": page([]),
    ...extra,
  });
}

describe("TopicDetailPage", { timeout: 30_000 }, () => {
  it("shows partitions with leaders, offsets and sizes, and configs with their sources", async () => {
    stubTopic();
    renderApp("/topics/30");

    expect(await screen.findByRole("heading", { level: 1, name: "payments.orders" })).toBeInTheDocument();
    const partitions = screen.getByRole("table", { name: "Partitions" });
    const first = within(partitions).getAllByRole("row")[1]!;
    expect(first).toHaveTextContent("0");
    expect(first).toHaveTextContent("700 B");
    expect(screen.getByText("10")).toBeInTheDocument(); // 7 + 3 messages in total
    const configs = screen.getByRole("table", { name: "Topic configs" });
    const rows = within(configs).getAllByRole("row");
    // The override first, in units, with its raw value, its meaning and the default a reset returns to.
    expect(rows[1]).toHaveTextContent("retention.ms");
    expect(rows[1]).toHaveTextContent("How long records are kept");
    expect(rows[1]).toHaveTextContent("1 hour3600000");
    expect(rows[1]).toHaveTextContent("topic overridedefault 7 days");
    expect(within(configs).getByRole("row", { name: /message.format.version/ })).toHaveTextContent("read-only");
  });

  it("marks under-replicated, offline and moving partitions in the partitions table", async () => {
    const replicated = topicDetail();
    replicated.live.partitions = [
      {
        partition: 0,
        leader: 1,
        replicas: [1, 2, 3],
        isr: [1, 2],
        offline_replicas: [3],
        under_replicated: true,
        offline: false,
        adding_replicas: [],
        removing_replicas: [],
        start_offset: 0,
        end_offset: 7,
        size_bytes: 700,
      },
      {
        partition: 1,
        leader: -1,
        replicas: [3],
        isr: [],
        offline_replicas: [3],
        under_replicated: true,
        offline: true,
        adding_replicas: [],
        removing_replicas: [],
        start_offset: 0,
        end_offset: 0,
        size_bytes: 0,
      },
      {
        partition: 2,
        leader: 2,
        replicas: [2, 1, 4, 3],
        isr: [2, 1, 3],
        offline_replicas: [],
        under_replicated: true,
        offline: false,
        adding_replicas: [4],
        removing_replicas: [3],
        start_offset: 0,
        end_offset: 3,
        size_bytes: 300,
      },
    ];
    stubTopic("developer", { "GET /api/v1/topics/30/": json(200, replicated) });
    renderApp("/topics/30");

    const table = await screen.findByRole("table", { name: "Partitions" });
    const [, first, second, third] = within(table).getAllByRole("row");
    expect(first).toHaveTextContent("1, 2, 3 (offline: 3)");
    expect(first).toHaveTextContent("not in sync: 3");
    expect(within(first!).getByText("under-replicated")).toBeInTheDocument();
    expect(within(first!).queryByText("offline")).not.toBeInTheDocument();
    expect(within(second!).getByText("offline")).toBeInTheDocument();
    expect(within(second!).getByText("none")).toBeInTheDocument();
    expect(within(third!).getByText("moving +4 −3")).toBeInTheDocument();
  });

  it("edits a config and resets an override to the default", async () => {
    const fetchSpy = stubTopic("developer", { "PATCH /api/v1/topics/30/configs/": json(200, topicDetail()) });
    const { user } = renderApp("/topics/30");

    await user.click(await screen.findByRole("button", { name: "Edit cleanup.policy" }));
    const dialog = screen.getByRole("dialog", { name: "Edit cleanup.policy" });
    expect(within(dialog).queryByRole("button", { name: "Reset to default" })).not.toBeInTheDocument();
    // A list of choices: checkboxes, one per value Kafka accepts.
    await user.click(within(dialog).getByRole("checkbox", { name: "compact" }));
    await user.click(within(dialog).getByRole("checkbox", { name: "delete" }));
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());

    await user.click(screen.getByRole("button", { name: "Edit retention.ms" }));
    await user.click(screen.getByRole("button", { name: "Reset to default" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const patches = requestsOf(fetchSpy).filter((request) => request.method === "PATCH");
    expect(await patches[0]!.json()).toEqual({ configs: { "cleanup.policy": "compact" } });
    expect(await patches[1]!.json()).toEqual({ configs: { "retention.ms": null } });
  });

  it("checks a value in units before saving and explains the cluster's refusal", async () => {
    const fetchSpy = stubTopic("developer", {
      "PATCH /api/v1/topics/30/configs/": json(400, {
        error: {
          code: "cluster_unreachable",
          message: "The cluster did not answer in time: its brokers may be down, paused or overloaded.",
          details: { kafka_error: "_TIMED_OUT", message: "Local: Timed out", hint: "Check the cluster's health." },
        },
      }),
    });
    const { user } = renderApp("/topics/30");

    await user.click(await screen.findByRole("button", { name: "Edit retention.ms" }));
    const dialog = screen.getByRole("dialog", { name: "Edit retention.ms" });
    expect(dialog).toHaveTextContent("How long records are kept");
    expect(dialog).toHaveTextContent("Default7 days");
    const amount = within(dialog).getByLabelText("New value");
    expect(amount).toHaveValue("1");
    expect(within(dialog).getByRole("combobox", { name: "Unit" })).toHaveValue("hours");

    // Above the team's 30-day cap: said before anything is sent.
    await user.clear(amount);
    await user.type(amount, "31");
    await user.selectOptions(within(dialog).getByRole("combobox", { name: "Unit" }), "days");
    expect(within(dialog).getByText("At most 30 days (the team's policy).")).toBeInTheDocument();
    expect(within(dialog).getByRole("button", { name: "Save" })).toBeDisabled();

    await user.clear(amount);
    await user.type(amount, "2");
    await user.click(within(dialog).getByRole("button", { name: "Save" }));
    expect(
      await within(dialog).findByText(
        "The cluster did not answer in time: its brokers may be down, paused or overloaded. Check the cluster's health.",
      ),
    ).toBeInTheDocument();
    const patch = requestsOf(fetchSpy).find((request) => request.method === "PATCH")!;
    expect(await patch.json()).toEqual({ configs: { "retention.ms": "172800000" } });
  });

  it("offers no changes to a viewer", async () => {
    stubTopic("viewer");
    renderApp("/topics/30");
    await screen.findByRole("table", { name: "Topic configs" });
    expect(screen.queryByRole("button", { name: "More actions" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Produce message" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /^Edit / })).not.toBeInTheDocument();
  });

  it("keeps destructive actions in a menu, away from the primary action, usable by keyboard", async () => {
    stubTopic("developer");
    const { user } = renderApp("/topics/30");
    const more = await screen.findByRole("button", { name: "More actions" });
    // No red buttons beside Produce: purges and deletion are a menu away.
    expect(screen.queryByRole("button", { name: /Purge|Delete/ })).not.toBeInTheDocument();

    more.focus();
    await user.keyboard("{ArrowDown}");
    const menu = screen.getByRole("menu", { name: "More actions" });
    expect(
      within(menu)
        .getAllByRole("menuitem")
        .map((item) => item.textContent),
    ).toEqual(["Purge all messages…", "Purge a partition…", "Delete topic…"]);
    expect(within(menu).getByRole("menuitem", { name: "Purge all messages…" })).toHaveFocus();
    await user.keyboard("{ArrowUp}");
    expect(within(menu).getByRole("menuitem", { name: "Delete topic…" })).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("menu")).not.toBeInTheDocument();
    expect(more).toHaveFocus();

    await user.click(more);
    await user.click(screen.getByRole("menuitem", { name: "Purge a partition…" }));
    expect(screen.getByRole("dialog", { name: "Purge a partition of payments.orders" })).toBeInTheDocument();
  });

  it("deletes the topic only after its name is typed", async () => {
    const fetchSpy = stubTopic("developer", { "DELETE /api/v1/topics/30/": { status: 204 } });
    const { router, user } = renderApp("/topics/30");

    await user.click(await screen.findByRole("button", { name: "More actions" }));
    await user.click(screen.getByRole("menuitem", { name: "Delete topic…" }));
    const confirm = screen.getByRole("alertdialog", { name: "Delete topic payments.orders?" });
    const button = within(confirm).getByRole("button", { name: "Delete" });
    expect(button).toBeDisabled();
    await user.type(within(confirm).getByRole("textbox"), "payments.orders");
    await user.click(button);
    await waitFor(() => expect(router.state.location.pathname).toBe("/topics"));
    const deletion = requestsOf(fetchSpy).find((request) => request.method === "DELETE");
    expect(await deletion!.json()).toEqual({ confirm_name: "payments.orders" });
  });

  it("purges after confirmation and adds partitions", async () => {
    const fetchSpy = stubTopic("developer", {
      "POST /api/v1/topics/30/purge/": json(200, { start_offsets: { "0": 7, "1": 5 } }),
      "POST /api/v1/topics/30/partitions/": json(200, topicDetail()),
    });
    const { user } = renderApp("/topics/30");

    await user.click(await screen.findByRole("button", { name: "More actions" }));
    await user.click(screen.getByRole("menuitem", { name: "Purge all messages…" }));
    const confirm = screen.getByRole("alertdialog", { name: "Purge every message of payments.orders?" });
    await user.type(within(confirm).getByRole("textbox"), "payments.orders");
    await user.click(within(confirm).getByRole("button", { name: "Purge" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());

    await user.click(screen.getByRole("button", { name: "Add partitions" }));
    const dialog = screen.getByRole("dialog", { name: "Add partitions" });
    const total = within(dialog).getByLabelText("New partition count");
    await user.clear(total);
    await user.type(total, "2");
    await user.click(within(dialog).getByRole("button", { name: "Add partitions" }));
    expect(total).toHaveAccessibleDescription(/Enter a total above the current 2\./);
    await user.clear(total);
    await user.type(total, "6");
    await user.click(within(dialog).getByRole("button", { name: "Add partitions" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const posts = requestsOf(fetchSpy).filter((request) => request.method === "POST");
    expect(await posts[0]!.json()).toEqual({});
    expect(await posts[1]!.json()).toEqual({ partitions: 6 });
  });

  it("shows the error state when the cluster cannot be asked", async () => {
    stubTopic("developer", {
      "GET /api/v1/topics/30/": json(502, {
        error: { code: "cluster_unreachable", message: "The cluster did not answer.", details: {} },
      }),
    });
    renderApp("/topics/30");
    expect(await screen.findByRole("alert")).toHaveTextContent("The cluster did not answer.");
  });
});

describe("Message browser", { timeout: 30_000 }, () => {
  it("reads the filters from the URL and sends them to the API", async () => {
    const fetchSpy = stubTopic("viewer", {
      "GET /api/v1/topics/30/messages/": json(200, browseResult({ messages: [message()] })),
    });
    renderApp("/topics/30/messages?partition=1&start=offset&offset=4&key=order&header=source&limit=20");

    const table = await screen.findByRole("table", { name: "Messages" });
    expect(within(table).getByRole("button", { name: "Details of partition 0 offset 6" })).toBeInTheDocument();
    const browse = requestsOf(fetchSpy).find((request) => request.url.includes("/messages/"))!;
    expect(Object.fromEntries(query(browse))).toEqual({
      start: "offset",
      partition: "1",
      offset: "4",
      key_contains: "order",
      header_key: "source",
      limit: "20",
    });
    expect(screen.getByLabelText("Partition")).toHaveValue("1");
    expect(screen.getByLabelText("Key contains")).toHaveValue("order");
  });

  it("pretty-prints JSON values, marks base64 and shows headers and decoded payloads", async () => {
    stubTopic("viewer", {
      "GET /api/v1/topics/30/messages/": json(
        200,
        browseResult({
          messages: [
            message(),
            message({
              offset: 7,
              key: { data: null, encoding: "null" },
              value: {
                data: "AAAAAAMCAAoxMg==",
                encoding: "base64",
                decoded: {
                  schema_id: 3,
                  subject: "payments.orders-value",
                  version: 1,
                  format: "AVRO",
                  message_type: null,
                  value: { id: "o-2" },
                  error: null,
                },
              },
            }),
          ],
        }),
      ),
    });
    const { user } = renderApp("/topics/30/messages");
    await user.click(await screen.findByRole("button", { name: "Details of partition 0 offset 6" }));
    await user.click(screen.getByRole("button", { name: "Details of partition 0 offset 7" }));

    const json_ = await screen.findByLabelText("Value as JSON");
    expect(json_.textContent).toBe('{\n  "id": "order-1",\n  "amount": 12\n}');
    const table = screen.getByRole("table", { name: "Messages" });
    expect(within(table).getAllByRole("term")[0]).toHaveTextContent("source");
    expect(within(table).getAllByRole("definition")[0]).toHaveTextContent("web");
    expect(screen.getByText(/Decoded \(Avro, id 3\)/)).toBeInTheDocument();
    expect(screen.getByLabelText("Decoded value").textContent).toContain('"id": "o-2"');
    expect(screen.getByText("AAAAAAMCAAoxMg==")).toBeInTheDocument();
    expect(screen.getByTitle("Not valid UTF-8: shown as base64")).toBeInTheDocument();
  });

  it("says why a framed payload could not be decoded", async () => {
    stubTopic("viewer", {
      "GET /api/v1/topics/30/messages/": json(
        200,
        browseResult({
          messages: [
            message({
              value: {
                data: "AAAAAGM=",
                encoding: "base64",
                decoded: {
                  schema_id: 99,
                  subject: null,
                  version: null,
                  format: null,
                  message_type: null,
                  value: null,
                  error: "Schema id 99 is not in the registry.",
                },
              },
            }),
          ],
        }),
      ),
    });
    const { user } = renderApp("/topics/30/messages");
    expect(await screen.findByText("schema id not found")).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Details of partition 0 offset 6" }));
    expect(await screen.findByText(/Decoded \(unknown schema, id 99\)/)).toBeInTheDocument();
    expect(screen.getByText("Schema id 99 is not in the registry.")).toBeInTheDocument();
    expect(screen.queryByLabelText("Decoded value")).not.toBeInTheDocument();
  });

  it("applies new filters through the URL, tails live and pauses", async () => {
    const fetchSpy = stubTopic("viewer", {
      "GET /api/v1/topics/30/messages/": (request: Request) =>
        new URL(request.url).searchParams.get("live")
          ? json(200, browseResult({ cursor: "tail", lag: 0 }))
          : json(200, browseResult()),
    });
    const { router, user } = renderApp("/topics/30/messages");

    expect(await screen.findByText("No messages")).toBeInTheDocument();
    await user.selectOptions(screen.getByLabelText("Start from"), "timestamp");
    expect(screen.getByLabelText("From time")).toBeInTheDocument();
    await user.selectOptions(screen.getByLabelText("Start from"), "earliest");
    await user.type(screen.getByLabelText("Value contains"), "refund");
    await user.click(screen.getByRole("button", { name: "Browse" }));
    await waitFor(() => expect(router.state.location.search).toBe("?start=earliest&value=refund"));

    await user.click(screen.getByRole("button", { name: "Live tail" }));
    expect(router.state.location.search).toContain("live=1");
    expect(await screen.findByText(/Following the log end/)).toBeInTheDocument();
    await waitFor(() => {
      const last = requestsOf(fetchSpy)
        .filter((request) => request.url.includes("/messages/"))
        .at(-1)!;
      expect(query(last).get("start")).toBe("newest");
    });
    expect(screen.getByRole("button", { name: "Pause" })).toHaveAttribute("aria-pressed", "true");
    await user.click(screen.getByRole("button", { name: "Pause" }));
    expect(router.state.location.search).not.toContain("live");
  });

  it("asks for an offset before browsing from one", async () => {
    stubTopic("viewer");
    renderApp("/topics/30/messages?start=offset");
    expect(await screen.findByText("Choose a partition and an offset to start from.")).toBeInTheDocument();
  });

  it("produces a message and says where it landed", async () => {
    const fetchSpy = stubTopic("developer", {
      "GET /api/v1/topics/30/messages/": json(200, browseResult()),
      "POST /api/v1/topics/30/produce/": json(201, { partition: 1, offset: 5 }),
    });
    const { router, user } = renderApp("/topics/30/messages");

    await user.click(await screen.findByRole("button", { name: "Produce message" }));
    const dialog = screen.getByRole("dialog", { name: "Produce a message to payments.orders" });
    await user.type(within(dialog).getByLabelText("Key"), "k1");
    await user.type(within(dialog).getByLabelText("Value"), "hello");
    await user.click(within(dialog).getByRole("button", { name: "Add header" }));
    await user.type(within(dialog).getByLabelText("Header 1"), "trace");
    await user.type(within(dialog).getByLabelText("Header value 1"), "abc");
    await user.selectOptions(within(dialog).getByLabelText("Partition"), "1");
    await user.click(within(dialog).getByRole("button", { name: "Produce" }));

    expect(await within(dialog).findByText(/Produced to partition 1 at offset 5\./)).toBeInTheDocument();
    const produced = requestsOf(fetchSpy).find((request) => request.method === "POST")!;
    expect(await produced.json()).toEqual({
      key: "k1",
      value: "hello",
      headers: { trace: "abc" },
      encoding: "utf-8",
      partition: 1,
    });
    await user.click(within(dialog).getByRole("link", { name: "Browse it" }));
    expect(router.state.location.search).toBe("?partition=1&start=offset&offset=5");
  });

  it("reads the records and the header's counts again after a produce, and Browse always reads", async () => {
    const empty = topicDetail();
    empty.live.partitions = empty.live.partitions.map((each) => ({ ...each, end_offset: 0, size_bytes: 0 }));
    const grown = topicDetail();
    grown.live.partitions = grown.live.partitions.map((each) => ({
      ...each,
      start_offset: 0,
      end_offset: 0,
      size_bytes: 0,
    }));
    grown.live.partitions[1] = { ...grown.live.partitions[1]!, end_offset: 1, size_bytes: 90 };
    let producedYet = false;
    const fetchSpy = stubTopic("developer", {
      "GET /api/v1/topics/30/": () => json(200, producedYet ? grown : empty),
      "GET /api/v1/topics/30/messages/": () =>
        json(200, browseResult({ messages: producedYet ? [message({ partition: 1, offset: 0 })] : [] })),
      "POST /api/v1/topics/30/produce/": () => {
        producedYet = true;
        return json(201, { partition: 1, offset: 0 });
      },
    });
    const browses = () => requestsOf(fetchSpy).filter((request) => request.url.includes("/messages/")).length;
    const { user } = renderApp("/topics/30/messages");
    expect(await screen.findByText("No messages")).toBeInTheDocument();
    expect(screen.getByText("0 B")).toBeInTheDocument();

    await user.click(screen.getByRole("button", { name: "Produce message" }));
    const dialog = screen.getByRole("dialog", { name: "Produce a message to payments.orders" });
    await user.type(within(dialog).getByLabelText("Value"), "hello");
    await user.click(within(dialog).getByRole("button", { name: "Produce" }));
    await within(dialog).findByText(/Produced to partition 1 at offset 0\./);
    // The form's own Close, after the title bar's ×.
    await user.click(within(dialog).getAllByRole("button", { name: "Close" }).at(-1)!);

    expect(await screen.findByRole("button", { name: "Details of partition 1 offset 0" })).toBeInTheDocument();
    expect(await screen.findByText("90 B")).toBeInTheDocument();
    const before = browses();
    await user.click(screen.getByRole("button", { name: "Browse" }));
    await waitFor(() => expect(browses()).toBe(before + 1));
  });
});
