import { useId, useState } from "react";

/** A read-only value with a Copy button, for secrets and links shown once. */
export function CopyField({ label, value }: { label: string; value: string }) {
  const inputId = useId();
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");

  async function copyValue() {
    try {
      await navigator.clipboard.writeText(value);
      setCopy("copied");
    } catch {
      setCopy("failed");
    }
  }

  return (
    <>
      <label htmlFor={inputId} className="field__label">
        {label}
      </label>
      <div className="secret">
        <input
          id={inputId}
          className="input mono secret__value"
          readOnly
          value={value}
          onFocus={(event) => event.target.select()}
        />
        <button type="button" className="button" onClick={() => value && void copyValue()}>
          {copy === "copied" ? "Copied" : "Copy"}
        </button>
      </div>
      <p className="muted" role="status">
        {copy === "copied"
          ? "Copied to the clipboard."
          : copy === "failed"
            ? "Could not copy; select the text and copy it."
            : ""}
      </p>
    </>
  );
}
