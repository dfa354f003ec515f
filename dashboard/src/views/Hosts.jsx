import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';

function Bar({ label, used, total, unit }) {
  const share = total > 0 ? Math.min(1, used / total) : 0;
  const level = share > 0.9 ? 'high' : share > 0.7 ? 'mid' : 'low';
  const text = `${label}: ${Number(used).toFixed(unit === 'cores' ? 1 : 0)} of ${total} ${unit} used`;
  return (
    <div class="bar-row">
      <span class="bar-label">{label}</span>
      <div class={`bar bar-${level}`} role="meter" aria-label={text} aria-valuemin={0}
        aria-valuemax={total} aria-valuenow={used} aria-valuetext={text}>
        <div style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </div>
      <span class="bar-text">{Number(used).toFixed(unit === 'cores' ? 1 : 0)} / {total} {unit}</span>
    </div>
  );
}

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
            <Bar label="CPU" used={h.cpu_used} total={h.cpus} unit="cores" />
            <Bar label="Memory" used={h.mem_used} total={h.mem_total} unit="MiB" />
            <Bar label="Disk" used={h.disk_used} total={h.disk_total} unit="GiB" />
          </li>
        ))}
      </ul>
    </section>
  );
}
