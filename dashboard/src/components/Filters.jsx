/** Search text and a status filter, shared by the container and capsule lists. */
export const STATUSES = ['Creating', 'Created', 'Running', 'Stopped', 'Paused', 'Restarting',
  'Rebuilding', 'Deleting', 'Error', 'Unknown', 'Dead'];

export function Filters({ text, status, onText, onStatus, shown, total }) {
  return (
    <div class="filters" role="search">
      <label>Search <input type="search" value={text} placeholder="name, uuid or image"
        onInput={(e) => onText(e.currentTarget.value)} /></label>
      <label>Status <select value={status} onChange={(e) => onStatus(e.currentTarget.value)}>
        <option value="">Any</option>
        {STATUSES.map((s) => <option value={s}>{s}</option>)}
      </select></label>
      <span class="count" aria-live="polite">{shown} of {total}</span>
    </div>
  );
}

export function matches(item, text, status) {
  if (status && item.status !== status) return false;
  if (!text) return true;
  const needle = text.toLowerCase();
  return [item.name, item.uuid, item.image, item.project_id].some((v) => v && String(v).toLowerCase().includes(needle));
}

export function StatusBadge({ status, task }) {
  return (
    <span class={`badge badge-${(status || 'unknown').toLowerCase()}`}>
      {status}{task ? ` (${task})` : ''}
    </span>
  );
}
