import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { go } from '../router.js';
import { allowed, useMe } from '../me.js';
import { Rows } from '../create/Rows.jsx';
import * as B from '../create/body.js';

export { splitCommand } from '../create/body.js';

const NET = { network: '', v4: '', v6: '' };
const MOUNT = { source: '', size: '', destination: '' };

/** Names to offer in a datalist; a failed read only leaves the list empty. */
function useChoices(path, key, when = true) {
  const [items, setItems] = useState([]);
  useEffect(() => {
    if (when) call('GET', path).then((a) => setItems(a[key] || []), () => setItems([]));
  }, [path, when]);
  return items;
}

/** Every field of Zun's create that a person sets; the API checks them all. */
export function CreateForm() {
  const me = useMe();
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [netRows, setNetRows] = useState([]);
  const [mountRows, setMountRows] = useState([]);
  const networks = useChoices('/dashboard/api/networks', 'networks');
  const volumes = useChoices('/dashboard/api/volumes', 'volumes');
  const hosts = useChoices('/v1/hosts', 'hosts', allowed(me, 'hosts'));
  const cinder = me && me.volume_driver === 'cinder';

  async function submit(e) {
    e.preventDefault();
    const f = Object.fromEntries(new FormData(e.currentTarget));
    const body = { image: f.image.trim() };
    if (f.name.trim()) body.name = f.name.trim();
    const command = B.splitCommand(f.command);
    if (command.length) body.command = command;
    for (const key of ['cpu', 'memory']) {
      const v = f[key].trim();
      if (v) body[key] = key === 'cpu' ? Number(v) || v : v;
    }
    const optional = {
      environment: B.pairs(f.environment), labels: B.pairs(f.labels), hints: B.pairs(f.hints),
      exposed_ports: B.exposedPorts(f.exposed_ports), healthcheck: B.healthcheck(
        { cmd: f.hc_cmd, interval: f.hc_interval, retries: f.hc_retries, timeout: f.hc_timeout }),
    };
    for (const [key, value] of Object.entries(optional)) if (value) body[key] = value;
    const groups = B.words(f.security_groups);
    if (groups.length) body.security_groups = groups;
    const n = B.nets(netRows);
    if (n.length) body.nets = n;
    const m = B.mounts(mountRows);
    if (m.length) body.mounts = m;
    if (f.interactive) { body.interactive = true; body.tty = true; }
    if (f.auto_remove) body.auto_remove = true;
    if (f.restart) body.restart_policy = { Name: f.restart };
    if (f.pull) body.image_pull_policy = f.pull;
    if (f.host && f.host.trim()) body.host = f.host.trim();
    setBusy(true);
    setError(null);
    try {
      const made = await call('POST', '/v1/containers', { query: { run: f.run ? 'true' : 'false' }, body });
      go(`/containers/${made.uuid}`);
    } catch (err) {
      setError(err.message);
      requestAnimationFrame(() => {
        const first = document.querySelector('form.create :is(input, select, textarea)[aria-invalid="true"]');
        if (first && first.focus) first.focus();
      });
    } finally {
      setBusy(false);
    }
  }

  const marks = B.located(error);
  const bad = (field) => marks.some((m) => m.field === field);
  const row = (field) => { const m = marks.find((x) => x.field === field); return m ? (m.index ?? -1) : null; };
  const key = (field) => { const m = marks.find((x) => x.field === field); return m ? m.key : null; };
  const inv = (field) => (bad(field) ? { 'aria-invalid': 'true', 'aria-describedby': 'create-error' } : {});

  return (
    <section class="page" aria-labelledby="create-title">
      <div class="page-head">
        <h1 id="create-title">Create a container</h1>
        <a href="#/capsule-create">or a capsule from a template</a>
      </div>
      <form class="create" onSubmit={submit} noValidate>
        <label>Image <input name="image" required {...inv('image')} placeholder="local/busybox" /></label>
        <label>Name <input name="name" {...inv('name')} placeholder="generated when empty" /></label>
        <label>Command <input name="command" {...inv('command')} placeholder="sleep 3600" /></label>
        <div class="pair">
          <label>CPU <input name="cpu" inputMode="decimal" {...inv('cpu')} placeholder="1.0" /></label>
          <label>Memory (MiB) <input name="memory" inputMode="numeric" {...inv('memory')} placeholder="512" /></label>
        </div>
        <label>Environment (one KEY=value a line) <textarea name="environment" rows={2} {...inv('environment')} /></label>

        <Rows legend="Networks" noun="Network" rows={netRows} onChange={setNetRows} blank={NET}
          invalidRow={row('nets')} invalidKey={key('nets')} describedBy="create-error" fields={[
            { key: 'network', label: 'Network', placeholder: 'name or id', list: 'network-names' },
            { key: 'v4', label: 'IPv4 fixed IP', placeholder: 'optional' },
            { key: 'v6', label: 'IPv6 fixed IP', placeholder: 'optional' }]} />
        {bad('nets') && row('nets') === -1 && <p class="error">The networks are refused as a whole.</p>}
        <datalist id="network-names">
          {networks.map((n) => <option value={n.name || n.uuid}>{n.subnet}{n.shared ? ' (shared)' : ''}</option>)}
        </datalist>

        <Rows legend={cinder ? 'Mounts (Cinder volumes)' : 'Mounts (volumes)'} noun="Mount" rows={mountRows}
          onChange={setMountRows} blank={MOUNT} invalidRow={row('mounts')} invalidKey={key('mounts')} describedBy="create-error" fields={[
            { key: 'source', label: 'Volume', list: 'volume-names',
              placeholder: cinder ? 'a Cinder volume name or id; empty: a new one' : 'a name (made on first use) or id' },
            { key: 'size', label: 'Size (GiB)', inputMode: 'numeric', placeholder: 'for a new volume' },
            { key: 'destination', label: 'Mounted at', placeholder: '/data' }]} />
        <datalist id="volume-names">
          {volumes.map((v) => <option value={v.name || v.cinder_volume_id || v.uuid}>{v.size ? `${v.size} GiB` : v.provider}</option>)}
        </datalist>

        <label>Exposed ports (such as 80/tcp 53/udp) <input name="exposed_ports" {...inv('exposed_ports')} placeholder="80/tcp" /></label>
        <label>Security groups (names or ids) <input name="security_groups" {...inv('security_groups')} placeholder="default" /></label>
        <label>Labels (one KEY=value a line) <textarea name="labels" rows={2} {...inv('labels')} /></label>
        <label>Scheduler hints (one KEY=value a line) <textarea name="hints" rows={2} {...inv('hints')} /></label>
        <fieldset class="group">
          <legend>Healthcheck</legend>
          <label>Healthcheck command <input name="hc_cmd" {...inv('healthcheck')} placeholder="test -f /tmp/ok" /></label>
          <div class="pair">
            <label>Interval (s) <input name="hc_interval" inputMode="numeric" {...inv('healthcheck')} /></label>
            <label>Retries <input name="hc_retries" inputMode="numeric" {...inv('healthcheck')} /></label>
            <label>Timeout (s) <input name="hc_timeout" inputMode="numeric" {...inv('healthcheck')} /></label>
          </div>
        </fieldset>
        <label>Restart policy <select name="restart" {...inv('restart_policy')}>
          <option value="">no (default)</option><option value="always">always</option>
          <option value="on-failure">on-failure</option><option value="unless-stopped">unless-stopped</option>
        </select></label>
        {allowed(me, 'image_pull_policy') && (
          <label>Image pull policy <select name="pull" {...inv('image_pull_policy')}>
            <option value="">the service's default</option><option value="ifnotpresent">ifnotpresent</option>
            <option value="always">always</option><option value="never">never</option>
          </select></label>
        )}
        {allowed(me, 'host') && (
          <label>Host (admins) <input name="host" list="host-names" {...inv('host')} placeholder="the scheduler picks" />
            <datalist id="host-names">{hosts.map((h) => <option value={h.hostname} />)}</datalist>
          </label>
        )}
        <label class="check"><input type="checkbox" name="interactive" /> Interactive with a TTY</label>
        <label class="check"><input type="checkbox" name="auto_remove" /> Remove it when it exits (auto-remove)</label>
        <label class="check"><input type="checkbox" name="run" checked /> Start it once created</label>
        {error && <p class="error" role="alert" id="create-error">{error}</p>}
        <button type="submit" disabled={busy}>Create</button>
      </form>
    </section>
  );
}
