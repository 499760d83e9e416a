import { useEffect, useRef, type RefObject } from "react";

const FOCUSABLE = [
  "a[href]",
  "button:not([disabled])",
  "input:not([disabled]):not([type=hidden])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  "[tabindex]:not([tabindex='-1'])",
].join(", ");

/** Open modals, the topmost last: keys go to the topmost only, so a dialog over a dialog closes alone. */
const openModals: HTMLElement[] = [];

function focusablesIn(panel: HTMLElement): HTMLElement[] {
  return Array.from(panel.querySelectorAll<HTMLElement>(FOCUSABLE)).filter((element) => !element.closest("[hidden]"));
}

/**
 * What every modal needs for the keyboard: focus moves in on opening (to `initialFocus`, else the
 * first field or button other than the title bar's ×) and back to whatever opened it on closing;
 * Tab and Shift+Tab cycle inside; Escape closes. The keys are read on the document, not the panel:
 * a button that disables itself while it works (Produce, Save) drops focus to the page's body, and
 * Escape must still close the dialog then.
 */
export function useModal(
  panelRef: RefObject<HTMLElement | null>,
  onClose: () => void,
  initialFocus?: RefObject<HTMLElement | null>,
): void {
  const close = useRef(onClose);
  close.current = onClose;

  useEffect(() => {
    const panel = panelRef.current;
    if (!panel) return undefined;
    const previouslyFocused = document.activeElement;
    openModals.push(panel);
    const first =
      initialFocus?.current ?? panel.querySelector<HTMLElement>(`:is(${FOCUSABLE}):not([data-dialog-close])`);
    (first ?? panel).focus();

    function onKeyDown(event: KeyboardEvent) {
      if (openModals.at(-1) !== panel || !panel) return;
      if (event.key === "Escape") {
        event.preventDefault();
        close.current();
        return;
      }
      if (event.key !== "Tab") return;
      const focusables = focusablesIn(panel);
      if (focusables.length === 0) {
        event.preventDefault();
        panel.focus();
        return;
      }
      const firstElement = focusables[0]!;
      const lastElement = focusables.at(-1)!;
      const active = document.activeElement;
      const inside = active instanceof Node && panel.contains(active) && active !== panel;
      if (!inside) {
        event.preventDefault();
        (event.shiftKey ? lastElement : firstElement).focus();
      } else if (event.shiftKey && active === firstElement) {
        event.preventDefault();
        lastElement.focus();
      } else if (!event.shiftKey && active === lastElement) {
        event.preventDefault();
        firstElement.focus();
      }
    }

    document.addEventListener("keydown", onKeyDown);
    return () => {
      document.removeEventListener("keydown", onKeyDown);
      openModals.splice(openModals.indexOf(panel), 1);
      if (previouslyFocused instanceof HTMLElement && previouslyFocused.isConnected) previouslyFocused.focus();
    };
    // Opening and closing are the mount and unmount; the latest onClose is read through the ref.
  }, [panelRef, initialFocus]);
}
