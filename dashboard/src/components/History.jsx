import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';

/** The container's actions, newest first (the API's container_actions). */
export function History({ uuid, version }) {
  const [actions, setActions] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    call('GET', `/v1/containers/${uuid}/container_actions`)
      .then((a) => setActions(a.containerActions), (err) => setError(err.message));
  }, [uuid, version]);
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!actions) return <p role="status">Loading…</p>;
  return (
    <table class="history">
      <caption>Actions on this container, newest first</caption>
      <thead><tr><th scope="col">Action</th><th scope="col">Started (UTC)</th><th scope="col">Finished (UTC)</th><th scope="col">Result</th><th scope="col">User</th><th scope="col">Request</th></tr></thead>
      <tbody>
        {actions.map((a) => (
          <tr key={a.request_id + a.action}>
            <td>{a.action}</td><td>{a.start_time}</td><td>{a.finish_time || ''}</td>
            <td>{a.message || (a.finish_time ? 'Success' : 'In progress')}</td><td>{a.user_id}</td><td><code>{a.request_id}</code></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
