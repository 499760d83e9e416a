import { useState } from "react";

import { Field } from "../../components/Field";

/** The control plane's rule for cluster names (they become directory and host names). */
const CLUSTER_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const CLUSTER_NAME_RULE = "1 to 63 lowercase letters, digits and dashes, starting and ending with a letter or digit.";

/** The name being typed, checked against the rule on submit so a bad name never reaches the API. */
export function useClusterName() {
  const [name, setName] = useState("");
  const [error, setError] = useState<string | undefined>();

  function validate(): boolean {
    const valid = CLUSTER_NAME.test(name);
    setError(valid ? undefined : CLUSTER_NAME_RULE);
    return valid;
  }

  return { name, setName, error, validate };
}

interface ClusterNameFieldProps {
  value: string;
  onChange: (name: string) => void;
  error?: string;
}

export function ClusterNameField({ value, onChange, error }: ClusterNameFieldProps) {
  return (
    <Field label="Name" hint={CLUSTER_NAME_RULE} error={error}>
      {(control) => (
        <input
          {...control}
          className="input mono"
          autoComplete="off"
          value={value}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
    </Field>
  );
}
