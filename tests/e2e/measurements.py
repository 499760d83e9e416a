"""Timings taken inside the browser, shared by the console's browser tests and bench/console_search.py."""

# Types `term` into the topics search box and resolves with the milliseconds until the frame showing the one
# matching topic is painted: React's filtering, the virtual table's re-render and the browser's layout.
SEARCH_AND_MEASURE = """
async (term) => {
  const input = document.querySelector('input[type="search"]');
  const count = document.querySelector('[data-testid="topic-count"]');
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  const started = performance.now();
  setValue.call(input, term);
  input.dispatchEvent(new Event("input", { bubbles: true }));
  await new Promise((resolve) => {
    const check = () => (count.textContent.startsWith("1 of") ? resolve() : requestAnimationFrame(check));
    check();
  });
  // Until the frame with the filtered table is painted.
  await new Promise((resolve) => requestAnimationFrame(() => resolve()));
  return performance.now() - started;
}
"""
