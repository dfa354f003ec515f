import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';

/** Read ``path`` and keep its ``key`` list; ``load`` reads again. */
export function useList(path, key, query) {
  const [items, setItems] = useState(null);
  const [error, setError] = useState(null);
  const q = JSON.stringify(query || {});
  const load = () => call('GET', path, { query })
    .then((a) => { setItems(a[key] || []); setError(null); }, (e) => setError(e.message));
  useEffect(() => { load(); }, [path, q]);
  return { items, error, load };
}

/**
 * A plain table of a resource list (captioned, column headers scoped): these lists
 * are short, unlike the container list's virtual rows. ``columns``: [{label, render}].
 */
export function Table({ caption, columns, items, empty, rowKey }) {
  if (items && items.length === 0) return <p class="hint">{empty}</p>;
  return (
    <table class="history resources">
      <caption>{caption}</caption>
      <thead><tr>{columns.map((c) => <th scope="col">{c.label}</th>)}</tr></thead>
      <tbody>
        {(items || []).map((item) => (
          <tr key={rowKey(item)}>{columns.map((c) => <td>{c.render(item)}</td>)}</tr>
        ))}
      </tbody>
    </table>
  );
}

/** A resource page: its heading, a Refresh button, the error or the table. */
export function ResourcePage({ id, title, list, children, intro }) {
  return (
    <section class="page" aria-labelledby={`${id}-title`}>
      <div class="page-head">
        <h1 id={`${id}-title`}>{title}</h1>
        <button type="button" onClick={list.load}>Refresh</button>
      </div>
      {intro && <p class="hint">{intro}</p>}
      {list.error && <p class="error" role="alert">{list.error}</p>}
      {!list.items && !list.error && <p role="status">Loading…</p>}
      {children}
    </section>
  );
}
