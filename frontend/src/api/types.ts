/**
 * Names for the API's payloads, looked up through the paths rather than the
 * schema's component names, which the generator is free to rename.
 */
import type { paths } from "./schema";

type JsonBody<Response> = Response extends { content: { "application/json": infer Body } } ? Body : never;

export type Session = JsonBody<paths["/api/v1/auth/session/"]["get"]["responses"][200]>;
export type User = NonNullable<Session["user"]>;
export type LoginRequest = NonNullable<
  paths["/api/v1/auth/login/"]["post"]["requestBody"]
>["content"]["application/json"];
export type Overview = JsonBody<paths["/api/v1/overview/"]["get"]["responses"][200]>;
