import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';

/** noauth: a token names the caller. Keystone: a password login through berth. */
export function Login({ onToken }) {
  const [mode, setMode] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    call('GET', '/dashboard/api/config').then((c) => setMode(c.auth), (e) => setError(e.message));
  }, []);

  async function submit(e) {
    e.preventDefault();
    const form = Object.fromEntries(new FormData(e.currentTarget));
    setError(null);
    if (mode === 'noauth') {
      onToken(form.token.trim());
      return;
    }
    setBusy(true);
    try {
      const answer = await call('POST', '/dashboard/api/login', { body: form });
      onToken(answer.token);
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="login">
      <h1>berth console</h1>
      {mode === null && !error && <p>Loading…</p>}
      {mode && (
        <form onSubmit={submit} aria-describedby="login-help">
          {mode === 'noauth' ? (
            <>
              <p id="login-help">This berth runs without Keystone: the token names you.
                <code>admin</code> is an administrator, <code>alice:p1</code> is user alice in project p1.</p>
              <label>Token <input name="token" autocomplete="off" required autofocus /></label>
            </>
          ) : (
            <>
              <p id="login-help">Log in with your OpenStack (Keystone) account.</p>
              <label>User name <input name="username" autocomplete="username" required autofocus /></label>
              <label>Password <input name="password" type="password" autocomplete="current-password" required /></label>
              <label>Project <input name="project_name" required /></label>
              <label>User domain <input name="user_domain_name" placeholder="Default" /></label>
              <label>Project domain <input name="project_domain_name" placeholder="Default" /></label>
            </>
          )}
          <button type="submit" disabled={busy}>Log in</button>
        </form>
      )}
      {error && <p class="error" role="alert">{error}</p>}
    </main>
  );
}
