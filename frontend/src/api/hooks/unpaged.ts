/**
 * Some detail actions (a group's reset preview and resets, the job catalog) answer with a plain
 * JSON array, while the OpenAPI document describes them as limit/offset pages because their
 * viewsets paginate lists. Reading either shape keeps the console right today and after the
 * schema is corrected.
 */
export function itemsOf<Item>(body: Item[] | { results: Item[] }): Item[] {
  return Array.isArray(body) ? body : body.results;
}
