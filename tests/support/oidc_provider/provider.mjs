// A real OpenID provider for the single sign-on tests: the npm package oidc-provider (OpenID-certified),
// configured from environment variables the Python fixture sets (tests/fixtures/oidc.py).
//
//   OIDC_TEST_PORT       port on 127.0.0.1; the issuer is http://127.0.0.1:<port>
//   OIDC_TEST_CLIENTS    JSON list of client metadata (client_id, client_secret, redirect_uris, ...)
//   OIDC_TEST_USERS      path of a JSON file {"<login>": {"password", "email", "name", "groups": [...]}},
//                        read again on every login and claims request, so a test changes a user's
//                        groups between two logins by rewriting it
//   OIDC_TEST_JWKS       path of a JSON file {"keys": [<private JWK>]}: the signing keys (the test holds them
//                        too, so it can sign a token that passes the signature check and fails another one)
//   OIDC_TEST_ID_TOKEN_TTL, OIDC_TEST_ACCESS_TOKEN_TTL   seconds (default 600)
//   OIDC_TEST_API_AUDIENCE  a resource (RFC 8707) for which the provider issues JWT access tokens (RFC 9068),
//                        as a person's script asks for them with `resource=<audience>`
//
// The device authorization grant (RFC 8628) is on, for public clients registered with its grant type (the
// `streamhub login` CLI): /device shows the user code form, then a confirmation with Continue and Abort.
//   OIDC_TEST_DEVICE_POLL_INTERVAL  seconds the device authorization answer tells the CLI to wait between
//                        polls (unset: none is named and clients wait RFC 8628's default five seconds)
//
// Interactions are plain HTML forms without scripts or external assets, so a headless browser and a plain
// HTTP client both get through them. Consent is implied for the registered clients (first-party apps): the
// consent prompt is answered by granting what is missing, without a page.
import { readFileSync } from "node:fs";
import http from "node:http";
import { URLSearchParams } from "node:url";

import Provider, { errors } from "oidc-provider";

const port = Number(process.env.OIDC_TEST_PORT);
const apiAudience = process.env.OIDC_TEST_API_AUDIENCE || "urn:streamhub:api";
const issuer = `http://127.0.0.1:${port}`;
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));
const users = () => readJson(process.env.OIDC_TEST_USERS);
const escape = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

const page = (title, body) => `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title><link rel="icon" href="data:,">
<style>body{font-family:sans-serif;max-width:22rem;margin:3rem auto}label,input,button{display:block;width:100%;margin:.4rem 0}</style>
</head><body><h1>Test identity provider</h1>${body}</body></html>`;

const provider = new Provider(issuer, {
  clients: JSON.parse(process.env.OIDC_TEST_CLIENTS),
  jwks: readJson(process.env.OIDC_TEST_JWKS),
  cookies: { keys: ["streamhub-test-provider-cookie-key"] },
  scopes: ["openid", "offline_access", "email", "profile", "groups", "api"],
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["name", "preferred_username"],
    groups: ["groups"],
  },
  ttl: {
    IdToken: Number(process.env.OIDC_TEST_ID_TOKEN_TTL || 600),
    AccessToken: Number(process.env.OIDC_TEST_ACCESS_TOKEN_TTL || 600),
    RefreshToken: 3600,
    Session: 3600,
    Grant: 3600,
    Interaction: 600,
  },
  features: {
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      // Without a `resource` parameter the access token stays opaque, for the userinfo endpoint.
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (resource !== apiAudience) throw new errors.InvalidTarget();
        return {
          scope: "api",
          audience: resource,
          accessTokenFormat: "jwt",
          accessTokenTTL: Number(process.env.OIDC_TEST_ACCESS_TOKEN_TTL || 600),
          jwt: { sign: { alg: "RS256" } },
        };
      },
    },
    // `streamhub logout` revokes the CLI's refresh token (RFC 7009).
    revocation: { enabled: true },
    deviceFlow: {
      enabled: true,
      userCodeInputSource: async (ctx, form, _out, error) => {
        ctx.body = page(
          "Device sign-in",
          `${error ? `<p role="alert">${escape(error.name)}: ${escape(error.message)}</p>` : "<p>Enter the code your device shows.</p>"}
${form}<button type="submit" form="op.deviceInputForm">Continue</button>`,
        );
      },
      userCodeConfirmSource: async (ctx, form, client, _deviceInfo, userCode) => {
        ctx.body = page(
          "Confirm device",
          `<p>${escape(client.clientId)} shows the code <code>${escape(userCode)}</code>.</p>${form}
<button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Abort</button>`,
        );
      },
      successSource: async (ctx) => {
        ctx.body = page("Device signed in", "<p>Your device is signed in; you can close this page.</p>");
      },
    },
    rpInitiatedLogout: {
      enabled: true,
      logoutSource: async (ctx, form) => {
        ctx.body = page(
          "Sign out",
          `<p>Sign out of the test identity provider?</p>${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button>`,
        );
      },
      postLogoutSuccessSource: async (ctx) => {
        ctx.body = page("Signed out", "<p>You are signed out.</p>");
      },
    },
  },
  pkce: { required: () => true },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
  findAccount: async (_ctx, id) => {
    const user = users()[id];
    if (!user) return undefined;
    return {
      accountId: id,
      claims: async () => ({
        sub: id,
        email: user.email,
        email_verified: true,
        name: user.name || id,
        preferred_username: id,
        groups: user.groups || [],
      }),
    };
  },
  renderError: async (ctx, out) => {
    ctx.type = "html";
    ctx.body = page("Error", `<p role="alert">${escape(out.error)}: ${escape(out.error_description || "")}</p>`);
  },
});

const pollInterval = Number(process.env.OIDC_TEST_DEVICE_POLL_INTERVAL || 0);
if (pollInterval) {
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === "/device/auth" && ctx.status === 200 && ctx.body && typeof ctx.body === "object") {
      ctx.body = { ...ctx.body, interval: pollInterval };
    }
  });
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => resolve(new URLSearchParams(Buffer.concat(chunks).toString())));
    req.on("error", reject);
  });
}

// The login interaction: /interaction/<uid> shows the form, a POST checks the password from the users file.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === "consent") {
    // First-party clients: grant whatever is still missing (e.g. an API resource's scopes) without asking.
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    const missing = details.prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(resource, scopes.join(" "));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  const form = (error) =>
    page(
      "Sign in",
      `${error ? `<p role="alert">${escape(error)}</p>` : ""}
<form method="post" action="/interaction/${details.uid}">
<label>Username <input name="login" autocomplete="username" autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button></form>`,
    );
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(form());
    return;
  }
  const body = await readBody(req);
  const login = body.get("login") || "";
  const user = users()[login];
  if (!user || user.password !== body.get("password")) {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(form("Wrong username or password."));
    return;
  }
  await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
}

const handle = provider.callback();
http
  .createServer((req, res) => {
    if (req.url.startsWith("/interaction/")) {
      interaction(req, res).catch((error) => {
        res.writeHead(400, { "content-type": "text/plain" }).end(String(error));
      });
      return;
    }
    handle(req, res);
  })
  .listen(port, "127.0.0.1", () => {
    console.log(`oidc-provider listening on ${issuer}`);
  });
