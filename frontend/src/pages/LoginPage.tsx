import { useId, useState, type FormEvent } from "react";
import { useNavigate, useSearchParams } from "react-router";

import { describeError } from "../api/errors";
import { useLogin } from "../api/hooks/session";
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

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    login.mutate(
      { username, password },
      { onSuccess: () => navigate(safeNextPath(searchParams.get("next")), { replace: true }) },
    );
  }

  return (
    <main className="login">
      <title>{`Sign in · ${APP_TITLE}`}</title>
      <form className="login__card" onSubmit={submit} aria-labelledby="login-heading">
        <h1 id="login-heading" className="login__title">
          {APP_TITLE}
        </h1>
        <p className="login__subtitle">Sign in to manage clusters, topics and access.</p>
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
            autoFocus
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
        <button type="submit" className="button button--primary login__submit" disabled={login.isPending}>
          Sign in
        </button>
      </form>
    </main>
  );
}
