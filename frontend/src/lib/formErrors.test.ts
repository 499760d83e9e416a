import { describe, expect, it } from "vitest";

import { ApiError } from "../api/errors";
import { formErrorsOf } from "./formErrors";

describe("formErrorsOf", () => {
  it("puts a 400's field errors next to the fields the form has", () => {
    const error = new ApiError(400, "invalid", "The request is not valid.", {
      name: ["Too long.", "Bad characters."],
      team: ["Unknown team."],
      non_field_errors: ["Pick another."],
    });
    expect(formErrorsOf(error, ["name"])).toEqual({
      fields: { name: "Too long. Bad characters." },
      form: "team: Unknown team. Pick another.",
    });
  });

  it("uses the message for refusals without field details", () => {
    const error = new ApiError(409, "duplicate", "A service account named 'x' already exists.");
    expect(formErrorsOf(error, ["name"])).toEqual({ fields: {}, form: "A service account named 'x' already exists." });
  });

  it("says a cluster's refusal in words with what to do, never its raw Kafka error", () => {
    const error = new ApiError(400, "cluster_unreachable", "The cluster did not answer in time.", {
      kafka_error: "_TIMED_OUT",
      message: "Failed while waiting for response from broker: Local: Timed out",
      hint: "Check the cluster's health, then try again.",
    });
    const shown = formErrorsOf(error, ["configs"]);
    expect(shown).toEqual({
      fields: {},
      form: "The cluster did not answer in time. Check the cluster's health, then try again.",
    });
    expect(shown.form).not.toContain("_TIMED_OUT");
  });

  it("has nothing to say without an error", () => {
    expect(formErrorsOf(null, ["name"])).toEqual({ fields: {}, form: null });
  });
});
