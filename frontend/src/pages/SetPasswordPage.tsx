import { useId, useState, type FormEvent } from "react";
import { Link, Navigate } from "react-router";

import { describeError } from "../api/errors";
import { usePasswordLink, useSetPasswordWithLink } from "../api/hooks/people";
import { APP_TITLE } from "../components/PageHeader";
import { LoadingState } from "../components/states";
import { formErrorsOf } from "../lib/formErrors";

/** The token travels in the URL's fragment (`#token=…`), which browsers never send to a server. */
export function tokenFromHash(hash: string): string {
  return new URLSearchParams(hash.replace(/^#/, "")).get("token") ?? "";
}

/** Where an invitation or a password reset link lands: the person chooses a password and is signed in. */
export function SetPasswordPage() {
  const [token] = useState(() => tokenFromHash(window.location.hash));
  const setPassword = useSetPasswordWithLink();
  // Once the password is set the link is spent: asking about it again would only be refused.
  const link = usePasswordLink(setPassword.isSuccess ? "" : token);

  let body;
  // Success first: the link is spent once the password is set, so a refetch of it then fails.
  if (setPassword.isSuccess && setPassword.data.authenticated) {
    return <Navigate to="/" replace />;
  } else if (setPassword.isSuccess) {
    body = (
      <>
        <p role="status">Your password is set{link.data ? `, ${link.data.username}` : ""}.</p>
        <Link className="button button--primary login__submit" to="/login">
          Sign in
        </Link>
      </>
    );
  } else if (!token || link.isError) {
    body = (
      <p className="form-error" role="alert">
        {token ? describeError(link.error) : "This page needs the link you were sent, in full."}
      </p>
    );
  } else if (link.isPending) {
    body = <LoadingState label="Checking the link…" />;
  } else {
    body = (
      <PasswordForm
        username={link.data.username}
        invite={link.data.purpose === "invite"}
        pending={setPassword.isPending}
        error={setPassword.error}
        onSubmit={(password) => setPassword.mutate({ token, password })}
      />
    );
  }

  return (
    <main className="login">
      <title>{`Set your password · ${APP_TITLE}`}</title>
      <div className="login__card">
        <h1 className="login__title">{APP_TITLE}</h1>
        {body}
      </div>
    </main>
  );
}

interface PasswordFormProps {
  username: string;
  invite: boolean;
  pending: boolean;
  error: Error | null;
  onSubmit: (password: string) => void;
}

function PasswordForm({ username, invite, pending, error, onSubmit }: PasswordFormProps) {
  const passwordId = useId();
  const repeatId = useId();
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [mismatch, setMismatch] = useState(false);
  const server = formErrorsOf(error, ["password"]);

  function submit(event: FormEvent) {
    event.preventDefault();
    setMismatch(password !== repeat);
    if (password === repeat) onSubmit(password);
  }

  return (
    <form onSubmit={submit} aria-label="Set your password">
      <p className="login__subtitle">
        {invite
          ? `Welcome, ${username}. Choose a password to finish your invitation.`
          : `Choose a new password, ${username}.`}
      </p>
      <input type="text" name="username" autoComplete="username" value={username} readOnly hidden />
      <div className="field">
        <label htmlFor={passwordId} className="field__label">
          New password
        </label>
        <input
          id={passwordId}
          className="input"
          type="password"
          autoComplete="new-password"
          required
          autoFocus
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
        <p className="field__hint">At least 8 characters, not all digits, not too common, not like your username.</p>
      </div>
      <div className="field">
        <label htmlFor={repeatId} className="field__label">
          Repeat it
        </label>
        <input
          id={repeatId}
          className="input"
          type="password"
          autoComplete="new-password"
          required
          value={repeat}
          onChange={(event) => setRepeat(event.target.value)}
        />
      </div>
      {mismatch || server.form || server.fields.password ? (
        <p className="form-error" role="alert">
          {mismatch ? "The two passwords differ." : (server.fields.password ?? server.form)}
        </p>
      ) : null}
      <button type="submit" className="button button--primary login__submit" disabled={pending}>
        Set password
      </button>
    </form>
  );
}
