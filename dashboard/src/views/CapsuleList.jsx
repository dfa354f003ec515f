import { useMemo, useState } from 'preact/hooks';
import { useLive } from '../store.js';
import { VirtualRows } from '../components/VirtualRows.jsx';
import { Filters, matches, StatusBadge } from '../components/Filters.jsx';

const COLUMNS = [
  { key: 'name', label: 'Name', width: '2fr', render: (c) => c.name },
  { key: 'status', label: 'Status', width: '1.2fr', render: (c) => <StatusBadge status={c.status} /> },
  { key: 'members', label: 'Containers', width: '2.5fr',
    render: (c) => (c.containers || []).map((m) => `${m.image} (${m.status})`).join(', ') },
  { key: 'cpu', label: 'CPU', width: '0.6fr', render: (c) => c.cpu },
  { key: 'memory', label: 'Memory (MiB)', width: '1fr', render: (c) => c.memory },
  { key: 'reason', label: 'Reason', width: '2fr', render: (c) => c.status_reason || '' },
];

/** ``search``: the text to narrow the list to at first (a capsule just made). */
export function CapsuleList({ search = '' }) {
  const live = useLive();
  const [text, setText] = useState(search);
  const [status, setStatus] = useState('');
  const all = live.capsules;
  const shown = useMemo(() => {
    const out = [...all.values()].filter((c) => matches(c, text, status));
    out.sort((a, b) => (a.name || '').localeCompare(b.name || ''));
    return out;
  }, [live.version, text, status]);
  return (
    <section class="page" aria-labelledby="capsules-title">
      <div class="page-head">
        <h1 id="capsules-title">Capsules</h1>
        <a class="button" href="#/capsule-create">Create a capsule</a>
      </div>
      <Filters text={text} status={status} onText={setText} onStatus={setStatus} shown={shown.length} total={all.size} />
      <VirtualRows items={shown} columns={COLUMNS} label="Capsules" rowKey={(c) => c.uuid} />
    </section>
  );
}
