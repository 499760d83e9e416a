import type { Page } from "./types";

/** The API's largest page (BoundedLimitOffsetPagination.max_limit). */
export const MAX_PAGE_SIZE = 500;

/**
 * Reads every page of a limit/offset list. The console's lists of teams,
 * members and accounts are small, so the pages that need them whole (counts
 * per team, filters) read them whole instead of paging in the UI.
 */
export async function listAll<Item>(
  fetchPage: (offset: number, limit: number) => Promise<Page<Item>>,
): Promise<Item[]> {
  const items: Item[] = [];
  for (;;) {
    const page = await fetchPage(items.length, MAX_PAGE_SIZE);
    items.push(...page.results);
    // An empty page ends the loop even if the count grew meanwhile.
    if (page.results.length === 0 || items.length >= page.count) return items;
  }
}
