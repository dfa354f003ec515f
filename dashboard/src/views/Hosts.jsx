import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Bar } from '../components/Bar.jsx';

/** Each compute node's capacity and what its containers claim (admins: host:get_all). */
export function Hosts() {
  const [hosts, setHosts] = useState(null);
  const [error, setError] = useState(null);
  const load = () => call('GET', '/v1/hosts').then((a) => { setHosts(a.hosts); setError(null); }, (e) => setError(e.message));
  useEffect(() => { load(); }, []);
  return (
    <section class="page" aria-labelledby="hosts-title">
      <div class="page-head">
        <h1 id="hosts-title">Hosts</h1>
        <button type="button" onClick={load}>Refresh</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {hosts && hosts.length === 0 && <p>No compute node has reported yet.</p>}
      <ul class="hosts">
        {(hosts || []).map((h) => (
          <li key={h.uuid} class="host">
            <h2>{h.hostname}</h2>
            <p class="hint">{h.total_containers} containers · {h.os || h.os_type} · {h.architecture} · kernel {h.kernel_version}</p>
            <Bar label="CPU" used={h.cpu_used} total={h.cpus} unit="cores" digits={1} />
            <Bar label="Memory" used={h.mem_used} total={h.mem_total} unit="MiB" />
            <Bar label="Disk" used={h.disk_used} total={h.disk_total} unit="GiB" />
          </li>
        ))}
      </ul>
    </section>
  );
}
