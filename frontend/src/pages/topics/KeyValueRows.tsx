export interface KeyValueRow {
  key: string;
  value: string;
}

interface KeyValueRowsProps {
  legend: string;
  keyLabel: string;
  valueLabel: string;
  rows: KeyValueRow[];
  onChange: (rows: KeyValueRow[]) => void;
  keyPlaceholder?: string;
}

/** The filled-in rows as an object; rows without a key are left out. */
export function rowsToRecord(rows: readonly KeyValueRow[]): Record<string, string> {
  return Object.fromEntries(rows.filter((row) => row.key.trim()).map((row) => [row.key.trim(), row.value]));
}

/** Editable name/value pairs (topic configs, message headers), each labelled by its number. */
export function KeyValueRows({ legend, keyLabel, valueLabel, rows, onChange, keyPlaceholder }: KeyValueRowsProps) {
  const update = (index: number, change: Partial<KeyValueRow>) =>
    onChange(rows.map((row, at) => (at === index ? { ...row, ...change } : row)));
  return (
    <fieldset className="config-rows">
      <legend className="field__label">{legend}</legend>
      {rows.map((row, index) => (
        <div className="config-rows__row" key={index}>
          <input
            className="input mono"
            aria-label={`${keyLabel} ${index + 1}`}
            placeholder={keyPlaceholder}
            value={row.key}
            onChange={(event) => update(index, { key: event.target.value })}
          />
          <input
            className="input mono"
            aria-label={`${valueLabel} ${index + 1}`}
            value={row.value}
            onChange={(event) => update(index, { value: event.target.value })}
          />
          <button
            type="button"
            className="button button--quiet"
            aria-label={`Remove ${keyLabel.toLowerCase()} ${index + 1}`}
            onClick={() => onChange(rows.filter((_, at) => at !== index))}
          >
            ×
          </button>
        </div>
      ))}
      <button type="button" className="button" onClick={() => onChange([...rows, { key: "", value: "" }])}>
        Add {keyLabel.toLowerCase()}
      </button>
    </fieldset>
  );
}
