import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api.js';
import { go } from '../router.js';
import { useLive } from '../store.js';
import { StatusBadge } from '../components/Filters.jsx';
import { Logs } from '../components/Logs.jsx';
import { Terminal } from '../components/Terminal.jsx';
import { History } from '../components/History.jsx';
import { Usage } from '../components/Usage.jsx';

// Which statuses each action is offered in (api-v1.md §7.6, §7.7).
const ACTIONS = [
  { id: 'start', label: 'Start', when: ['Created', 'Stopped', 'Error'] },
  { id: 'stop', label: 'Stop', when: ['Running'] },
  { id: 'reboot', label: 'Restart', when: ['Created', 'Running', 'Stopped', 'Error'] },
  { id: 'pause', label: 'Pause', when: ['Running'] },
  { id: 'unpause', label: 'Unpause', when: ['Paused'] },
];
const DELETABLE = ['Created', 'Error', 'Stopped', 'Deleted', 'Dead', 'Running'];
const TABS = [['overview', 'Overview'], ['usage', 'Usage'], ['logs', 'Logs'], ['terminal', 'Terminal'], ['history', 'History']];

function Field({ label, children }) {
  return <><dt>{label}</dt><dd>{children}</dd></>;
}

export function ContainerDetail({ uuid }) {
  const live = useLive();
  const [fetched, setFetched] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState(null);
  const [tab, setTab] = useState('overview');
  const [confirming, setConfirming] = useState(false);
  const [gone, setGone] = useState(false);

  useEffect(() => {
    setFetched(null); setGone(false);
    call('GET', `/v1/containers/${uuid}`).then(setFetched, (err) => {
      if (err.status === 404) setGone(true); else setError(err.message);
    });
  }, [uuid]);

  const streamed = live.containers.get(uuid);
  // The stream's view is the newest; the show answers before the stream has the row.
  const c = streamed || fetched;
  const seen = useRef(null);
  if (streamed) seen.current = uuid;
  // Listed by the live stream once, and no longer: deleted.
  const vanished = seen.current === uuid && !streamed && live.state === 'live';

  if (gone || vanished) {
    return (
      <section class="page">
        <h1>Container {uuid}</h1>
        <p role="status" data-testid="gone">This container is gone.</p>
        <a href="#/containers">Back to the containers</a>
      </section>
    );
  }
  if (!c) return <section class="page"><p role="status">{error || 'Loading…'}</p></section>;

  async function act(id) {
    setError(null);
    try {
      await call('POST', `/v1/containers/${uuid}/${id}`);
      setNotice(`${id} requested`);
    } catch (err) { setError(err.message); }
  }

  async function remove() {
    setError(null);
    setConfirming(false);
    try {
      await call('DELETE', `/v1/containers/${uuid}`, { query: c.status === 'Running' ? { stop: 'true' } : {} });
      setNotice('delete requested');
    } catch (err) { setError(err.message); }
  }

  const busy = !!c.task_state;
  return (
    <section class="page" aria-labelledby="detail-title">
      <div class="page-head">
        <h1 id="detail-title">{c.name}</h1>
        <span data-testid="status"><StatusBadge status={c.status} task={c.task_state} /></span>
      </div>
      <div class="actions" role="group" aria-label="Actions">
        {ACTIONS.map((a) => (
          <button type="button" onClick={() => act(a.id)} disabled={busy || !a.when.includes(c.status)}>{a.label}</button>
        ))}
        {confirming ? (
          <>
            <button type="button" class="danger" onClick={remove} autofocus>Confirm delete</button>
            <button type="button" onClick={() => setConfirming(false)}>Keep it</button>
          </>
        ) : (
          <button type="button" class="danger" disabled={busy || !DELETABLE.includes(c.status)} onClick={() => setConfirming(true)}>Delete</button>
        )}
      </div>
      {notice && <p class="notice" role="status">{notice}</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {c.status_reason && <p class="reason">Reason: {c.status_reason}</p>}

      <div role="tablist" aria-label="Container views" class="tabs">
        {TABS.map(([id, label]) => (
          <button type="button" role="tab" id={`tab-${id}`} aria-selected={tab === id} aria-controls={`panel-${id}`}
            tabIndex={tab === id ? 0 : -1} onClick={() => setTab(id)}
            onKeyDown={(e) => {
              const i = TABS.findIndex(([t]) => t === tab);
              const step = { ArrowRight: 1, ArrowLeft: TABS.length - 1 }[e.key];
              if (!step) return;
              const next = TABS[(i + step) % TABS.length][0];
              setTab(next);
              document.getElementById(`tab-${next}`).focus();   // the tablist pattern
            }}>{label}</button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} class="panel">
        {tab === 'overview' && (
          <dl class="fields">
            <Field label="UUID">{c.uuid}</Field>
            <Field label="Image">{c.image}</Field>
            <Field label="Command">{(c.command || []).map((w) => (/[\s'"]/.test(w) ? JSON.stringify(w) : w)).join(' ')}</Field>
            <Field label="Status detail">{c.status_detail || ''}</Field>
            <Field label="CPU">{c.cpu}</Field>
            <Field label="Memory (MiB)">{c.memory}</Field>
            <Field label="Project">{c.project_id}</Field>
            <Field label="User">{c.user_id}</Field>
            {c.host !== undefined && <Field label="Host">{c.host}</Field>}
            <Field label="Addresses">{Object.entries(c.addresses || {}).map(([net, list]) => `${net}: ${list.map((a) => a.addr).join(', ')}`).join('; ')}</Field>
            <Field label="Exposed ports">{(c.ports || []).join(', ')}</Field>
            <Field label="Security groups">{(c.security_groups || []).join(', ')}</Field>
            <Field label="Labels">{Object.entries(c.labels || {}).map(([k, v]) => `${k}=${v}`).join(' ')}</Field>
            <Field label="Healthcheck">{c.healthcheck && c.healthcheck.test ? `${c.healthcheck.test} (every ${c.healthcheck.interval || 0} s, ${c.healthcheck.retries || 0} retries)` : ''}</Field>
            <Field label="Auto-remove">{String(!!c.auto_remove)}</Field>
            <Field label="Interactive / TTY">{String(c.interactive)} / {String(c.tty)}</Field>
            <Field label="Restart policy">{c.restart_policy ? c.restart_policy.Name : ''}</Field>
            <Field label="Environment">{Object.entries(c.environment || {}).map(([k, v]) => `${k}=${v}`).join(' ')}</Field>
            <Field label="Created (UTC)">{c.created_at}</Field>
            <Field label="Updated (UTC)">{c.updated_at || ''}</Field>
          </dl>
        )}
        {tab === 'usage' && <Usage uuid={uuid} running={c.status === 'Running'} />}
        {tab === 'logs' && <Logs uuid={uuid} running={c.status === 'Running'} />}
        {tab === 'terminal' && (c.status === 'Running'
          ? <Terminal uuid={uuid} />
          : <p class="hint">A terminal needs a Running container; this one is {c.status}.</p>)}
        {tab === 'history' && <History uuid={uuid} version={c.updated_at} />}
      </div>
      <p><a href="#/containers" onClick={(e) => { e.preventDefault(); go('/containers'); }}>Back to the containers</a></p>
    </section>
  );
}
