import type { ConfigEntry } from "../api/types";

/** A config as the API reports it; untyped and unrestricted unless the overrides say otherwise. */
export function configEntry(overrides: Partial<ConfigEntry> = {}): ConfigEntry {
  return {
    value: "",
    source: "DEFAULT_CONFIG",
    read_only: false,
    sensitive: false,
    type: null,
    documentation: null,
    default: null,
    choices: [],
    multiple: false,
    unit: null,
    unlimited: null,
    rule: { allowed: true, minimum: null, maximum: null, reason: "" },
    ...overrides,
  };
}
