import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Bar } from '../components/Bar.jsx';
import { Chart, pushed } from '../components/Chart.jsx';

const EVERY = 5000;   // ms between two reads of the hosts' inventory while the page is open

/**
 * Each compute node's capacity and what its containers claim (admins: host:get_all),
 * read again every five seconds while the page is open; the claims over the last
 * five minutes as live graphs.
 */
export function Hosts() {
  const [hosts, setHosts] = useState(null);
  const [history, setHistory] = useState({});
  const [error, setError] = useState(null);
  const load = () => call('GET', '/v1/hosts').then((a) => {
    setHosts(a.hosts);
    setHistory((old) => Object.fromEntries(a.hosts.map((h) => {
      const was = old[h.uuid] || { cpu: [], mem: [] };
      return [h.uuid, { cpu: pushed(was.cpu, h.cpu_used), mem: pushed(was.mem, h.mem_used) }];
    })));
    setError(null);
  }, (e) => setError(e.message));
  useEffect(() => {
    load();
    const timer = setInterval(load, EVERY);
    return () => clearInterval(timer);
  }, []);
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
            {history[h.uuid] && (
              <div class="charts">
                <Chart title="CPU claimed (cores)" unit="cores" max={h.cpus} testId="host-chart-cpu"
                  series={[{ label: 'Claimed', values: history[h.uuid].cpu, color: '#1f5fae' }]} />
                <Chart title="Memory claimed (MiB)" unit="MiB" digits={0} max={h.mem_total} testId="host-chart-memory"
                  series={[{ label: 'Claimed', values: history[h.uuid].mem, color: '#1c7c3a' }]} />
              </div>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
