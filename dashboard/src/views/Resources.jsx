// The project's resources besides containers: networks, volumes, images, registries,
// quotas and services, each read when its page opens (and on Refresh).

import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Bar } from '../components/Bar.jsx';
import { ResourcePage, Table, useList } from '../components/Table.jsx';

const all = (allProjects) => (allProjects ? { all_projects: 'true' } : {});
const yes = (v) => (v ? 'yes' : 'no');

export function Networks({ allProjects }) {
  const list = useList('/dashboard/api/networks', 'networks', all(allProjects));
  return (
    <ResourcePage id="networks" title="Networks" list={list}
      intro="The networks your project can use: its own and the shared ones.">
      <Table caption="Networks" items={list.items} rowKey={(n) => n.uuid} empty="No network yet: the project's default one is made with its first container."
        columns={[
          { label: 'Name', render: (n) => n.name },
          { label: 'Subnet', render: (n) => [n.subnet, n.subnet_v6].filter(Boolean).join(', ') },
          { label: 'Gateway', render: (n) => n.gateway },
          { label: 'Shared', render: (n) => yes(n.shared) },
          { label: 'Default', render: (n) => yes(n.default) },
          { label: 'Project', render: (n) => n.project_id },
          { label: 'UUID', render: (n) => <code>{n.uuid}</code> },
        ]} />
    </ResourcePage>
  );
}

export function Volumes({ allProjects }) {
  const list = useList('/dashboard/api/volumes', 'volumes', all(allProjects));
  return (
    <ResourcePage id="volumes" title="Volumes" list={list}>
      <Table caption="Volumes, newest first" items={list.items} rowKey={(v) => v.uuid} empty="No volume yet."
        columns={[
          { label: 'Name', render: (v) => v.name || '' },
          { label: 'Driver', render: (v) => v.provider },
          { label: 'Size (GiB)', render: (v) => v.size ?? '' },
          { label: 'Host', render: (v) => v.host || '' },
          { label: 'Mounted by', render: (v) => v.mounts.map((m) => (
            <a href={`#/containers/${m.container_uuid}`}>{m.container_name || m.container_uuid} at {m.path}</a>
          )) },
          { label: 'Cinder volume', render: (v) => v.cinder_volume_id || '' },
          { label: 'Auto-remove', render: (v) => yes(v.auto_remove) },
        ]} />
    </ResourcePage>
  );
}

export function Images() {
  const list = useList('/v1/images', 'images');
  return (
    <ResourcePage id="images" title="Images" list={list} intro="The images on each compute host (admins).">
      <Table caption="Images" items={list.items} rowKey={(i) => i.uuid} empty="No image recorded yet."
        columns={[
          { label: 'Repository', render: (i) => i.repo },
          { label: 'Tag', render: (i) => i.tag },
          { label: 'Host', render: (i) => i.host },
          { label: 'Size (MiB)', render: (i) => (i.size ? (i.size / 1048576).toFixed(1) : '') },
          { label: 'Image id', render: (i) => <code>{(i.image_id || '').slice(0, 19)}</code> },
        ]} />
    </ResourcePage>
  );
}

export function Registries({ allProjects }) {
  const list = useList('/v1/registries', 'registries', all(allProjects));
  return (
    <ResourcePage id="registries" title="Registries" list={list}>
      <Table caption="Image registries" items={list.items} rowKey={(r) => r.uuid} empty="No registry: images come from the default one."
        columns={[
          { label: 'Name', render: (r) => r.name },
          { label: 'Domain', render: (r) => r.domain },
          { label: 'User name', render: (r) => r.username || '' },
          { label: 'Project', render: (r) => r.project_id },
          { label: 'UUID', render: (r) => <code>{r.uuid}</code> },
        ]} />
    </ResourcePage>
  );
}

const QUOTA_UNITS = { containers: ['Containers', 'containers'], cpu: ['CPU', 'cores'], memory: ['Memory', 'MiB'], disk: ['Disk', 'GiB'] };

/** A project's quota with what it uses (GET /v1/quotas/<project>?usages=true); the
 * caller's own project first, another one's for those the policy lets read it. */
export function Quotas({ me }) {
  const [typed, setTyped] = useState('');
  const [asked, setAsked] = useState(null);
  const [quota, setQuota] = useState(null);
  const [error, setError] = useState(null);
  const target = asked || (me && me.project_id);
  const load = () => {
    if (!target) return;
    call('GET', `/v1/quotas/${encodeURIComponent(target)}`, { query: { usages: 'true' } })
      .then((a) => { setQuota(a); setError(null); }, (e) => { setQuota(null); setError(e.message); });
  };
  useEffect(load, [target]);
  return (
    <section class="page" aria-labelledby="quotas-title">
      <div class="page-head">
        <h1 id="quotas-title">Quotas</h1>
        <button type="button" onClick={load}>Refresh</button>
      </div>
      <form class="inline" onSubmit={(e) => { e.preventDefault(); setAsked(typed.trim() || null); }}>
        <label>Project <input value={typed} placeholder={me ? me.project_id : ''} onInput={(e) => setTyped(e.currentTarget.value)} /></label>
        <button type="submit">Show</button>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      {quota && (
        <div class="host" role="group" aria-labelledby="quota-of">
          <h2 id="quota-of">Project {target}</h2>
          {Object.entries(QUOTA_UNITS).map(([key, [label, unit]]) => quota[key] && (
            <Bar label={label} used={quota[key].in_use} total={quota[key].limit} unit={unit} digits={key === 'cpu' ? 1 : 0} />
          ))}
        </div>
      )}
    </section>
  );
}

export function Services() {
  const list = useList('/v1/services', 'services');
  return (
    <ResourcePage id="services" title="Services" list={list} intro="berth's processes as Zun's service list shows them (admins).">
      <Table caption="Services" items={list.items} rowKey={(s) => s.id} empty="No service has reported."
        columns={[
          { label: 'Binary', render: (s) => s.binary },
          { label: 'Host', render: (s) => s.host },
          { label: 'State', render: (s) => <span class={`badge badge-${s.state === 'up' ? 'running' : 'error'}`}>{s.state}</span> },
          { label: 'Enabled', render: (s) => (s.disabled ? `no${s.disabled_reason ? ` (${s.disabled_reason})` : ''}` : 'yes') },
          { label: 'Forced down', render: (s) => yes(s.forced_down) },
          { label: 'Zone', render: (s) => s.availability_zone },
          { label: 'Last seen up (UTC)', render: (s) => s.last_seen_up || '' },
        ]} />
    </ResourcePage>
  );
}
