import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api.js';
import { useLive } from '../store.js';

/**
 * What was asked of the project's containers, newest first (GET /dashboard/api/actions):
 * read when the page opens and again when the live stream reports a change (at most
 * once a second), so a new action shows as its container's status moves.
 */
export function Events({ allProjects }) {
  const live = useLive();
  const [actions, setActions] = useState(null);
  const [error, setError] = useState(null);
  const last = useRef(0);
  const timer = useRef(null);

  const load = () => {
    last.current = Date.now();
    call('GET', '/dashboard/api/actions', { query: { limit: 200, all_projects: allProjects ? 'true' : '' } })
      .then((a) => { setActions(a.actions); setError(null); }, (e) => setError(e.message));
  };
  useEffect(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(load, Math.max(0, 1000 - (Date.now() - last.current)));
    return () => clearTimeout(timer.current);
  }, [live.version, allProjects]);

  return (
    <section class="page" aria-labelledby="events-title">
      <div class="page-head">
        <h1 id="events-title">Events</h1>
        <button type="button" onClick={load}>Refresh</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {!actions && !error && <p role="status">Loading…</p>}
      {actions && actions.length === 0 && <p class="hint">Nothing has been asked of a container yet.</p>}
      {actions && actions.length > 0 && (
        <table class="history resources">
          <caption>Container actions across the project, newest first</caption>
          <thead><tr><th scope="col">Started (UTC)</th><th scope="col">Container</th><th scope="col">Action</th><th scope="col">Result</th><th scope="col">User</th><th scope="col">Request</th></tr></thead>
          <tbody>
            {actions.map((a) => (
              <tr key={`${a.request_id}-${a.container_uuid}-${a.action}`}>
                <td>{a.start_time}</td>
                <td><a href={`#/containers/${a.container_uuid}`}>{a.container_name || a.container_uuid}</a></td>
                <td>{a.action}</td>
                <td>{a.message || (a.finish_time ? 'Success' : 'In progress')}</td>
                <td>{a.user_id}</td>
                <td><code>{a.request_id}</code></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
