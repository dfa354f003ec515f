import { useMemo, useState } from 'preact/hooks';
import { useLive } from '../store.js';
import { VirtualRows } from '../components/VirtualRows.jsx';
import { Filters, matches, StatusBadge } from '../components/Filters.jsx';

const COLUMNS = [
  { key: 'name', label: 'Name', width: '2fr', render: (c) => <a href={`#/containers/${c.uuid}`}>{c.name}</a> },
  { key: 'status', label: 'Status', width: '1.4fr', render: (c) => <StatusBadge status={c.status} task={c.task_state} /> },
  { key: 'image', label: 'Image', width: '2fr', render: (c) => c.image },
  { key: 'cpu', label: 'CPU', width: '0.6fr', render: (c) => c.cpu },
  { key: 'memory', label: 'Memory (MiB)', width: '1fr', render: (c) => c.memory },
  { key: 'project', label: 'Project', width: '1fr', render: (c) => c.project_id },
  { key: 'created', label: 'Created (UTC)', width: '1.5fr', render: (c) => c.created_at },
];

export function ContainerList() {
  const live = useLive();
  const [text, setText] = useState('');
  const [status, setStatus] = useState('');
  const all = live.containers;
  const shown = useMemo(() => {
    const out = [];
    for (const c of all.values()) if (matches(c, text, status)) out.push(c);
    out.sort((a, b) => (a.name || '').localeCompare(b.name || '') || a.uuid.localeCompare(b.uuid));
    return out;
  }, [live.version, text, status]);

  return (
    <section class="page" aria-labelledby="containers-title">
      <div class="page-head">
        <h1 id="containers-title">Containers</h1>
        <a class="button" href="#/create">Create a container</a>
      </div>
      <Filters text={text} status={status} onText={setText} onStatus={setStatus} shown={shown.length} total={all.size} />
      <VirtualRows items={shown} columns={COLUMNS} label="Containers" rowKey={(c) => c.uuid} />
    </section>
  );
}
