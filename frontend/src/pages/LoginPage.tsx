import { useId, useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";

import { describeError } from "../api/errors";
import { useAuthOptions, useLogin } from "../api/hooks/session";
import { safeNextPath } from "../auth/nextPath";
import { APP_TITLE } from "../components/PageHeader";

export function LoginPage() {
  const usernameId = useId();
  const passwordId = useId();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [searchParams] = useSearchParams();
  const navigate = useNavigate();
  const login = useLogin();
  const options = useAuthOptions();
  const next = safeNextPath(searchParams.get("next"));
  const sso = options.data?.sso;
  const ssoError = searchParams.get("sso_error");
  // Hidden by configuration, except at /login?local: the break-glass accounts' way in (the server accepts
  // only them then). Until the options arrive, or if they cannot be read, the form shows.
  const showLocalForm = options.data?.local_login !== false || searchParams.has("local");

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    login.mutate({ username, password }, { onSuccess: () => navigate(next, { replace: true }) });
  }

  return (
    <main className="login">
      <title>{`Sign in · ${APP_TITLE}`}</title>
      <div className="login__card">
        <h1 id="login-heading" className="login__title">
          {APP_TITLE}
        </h1>
        <p className="login__subtitle">Sign in to manage clusters, topics and access.</p>
        {ssoError ? (
          <p className="form-error" role="alert">
            {ssoError}
          </p>
        ) : null}
        {sso ? (
          // A full-page navigation: the server redirects to the provider and back.
          <a
            className="button button--primary login__submit"
            href={`${sso.login_url}?${new URLSearchParams({ next }).toString()}`}
          >
            Sign in with {sso.name}
          </a>
        ) : null}
        {sso && showLocalForm ? <p className="login__divider">or with a password</p> : null}
        {showLocalForm ? (
          <form onSubmit={submit} aria-labelledby="login-heading">
            <div className="field">
              <label htmlFor={usernameId} className="field__label">
                Username
              </label>
              <input
                id={usernameId}
                className="input"
                name="username"
                autoComplete="username"
                required
                autoFocus={!sso}
                value={username}
                onChange={(event) => setUsername(event.target.value)}
              />
            </div>
            <div className="field">
              <label htmlFor={passwordId} className="field__label">
                Password
              </label>
              <input
                id={passwordId}
                className="input"
                name="password"
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onChange={(event) => setPassword(event.target.value)}
              />
            </div>
            {login.isError ? (
              <p className="form-error" role="alert">
                {describeError(login.error)}
              </p>
            ) : null}
            <button
              type="submit"
              className={`button ${sso ? "" : "button--primary "}login__submit`}
              disabled={login.isPending}
            >
              Sign in
            </button>
          </form>
        ) : (
          <p className="login__footnote">
            <Link to={`/login?${new URLSearchParams({ local: "", next }).toString()}`}>Administrator sign-in</Link>{" "}
            (local break-glass accounts)
          </p>
        )}
      </div>
    </main>
  );
}
