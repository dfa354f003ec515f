import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Chart, pushed } from './Chart.jsx';

const EVERY = 2000;   // ms between the end of one stats call and the next
const KEEP = 60;      // samples kept: two minutes

/** "<in>/<out>" bytes, as the stats call gives NET I/O and BLOCK I/O. */
function pair(text) {
  const [a, b] = String(text || '0/0').split('/').map(Number);
  return [a || 0, b || 0];
}

/**
 * The container's CPU, memory and network use over the last two minutes, from the
 * API's stats call (one sample each two seconds while the tab is open).
 * Network is the rate between two samples of the cumulative byte counts.
 */
export function Usage({ uuid, running }) {
  const [h, setH] = useState({ cpu: [], mem: [], rx: [], tx: [], limit: 0, last: null });
  const [error, setError] = useState(null);

  useEffect(() => {
    let stopped = false;
    let timer = null;
    async function read() {
      try {
        const s = await call('GET', `/v1/containers/${uuid}/stats`);
        if (stopped) return;
        const now = performance.now();
        const [rx, tx] = pair(s['NET I/O(B)']);
        setH((old) => {
          const dt = old.last ? (now - old.last.at) / 1000 : 0;
          const rate = (v, prev) => (dt > 0 && v >= prev ? (v - prev) / dt / 1024 : 0);
          return {
            cpu: pushed(old.cpu, s['CPU %'] || 0, KEEP),
            mem: pushed(old.mem, s['MEM USAGE(MiB)'] || 0, KEEP),
            rx: old.last ? pushed(old.rx, rate(rx, old.last.rx), KEEP) : old.rx,
            tx: old.last ? pushed(old.tx, rate(tx, old.last.tx), KEEP) : old.tx,
            limit: s['MEM LIMIT(MiB)'] || 0,
            last: { at: now, rx, tx },
          };
        });
        setError(null);
      } catch (err) {
        if (!stopped) setError(err.message);
      }
      if (!stopped) timer = setTimeout(read, EVERY);
    }
    if (running) read();
    return () => { stopped = true; clearTimeout(timer); };
  }, [uuid, running]);

  if (!running) return <p class="hint">Resource use is read from a Running container.</p>;
  return (
    <div class="charts">
      {error && <p class="error" role="alert">{error}</p>}
      <Chart title="CPU (% of one core)" unit="%" testId="chart-cpu"
        series={[{ label: 'CPU', values: h.cpu, color: '#1f5fae' }]} />
      <Chart title={`Memory (MiB, limit ${h.limit ? h.limit.toFixed(0) : '?'})`} unit="MiB" testId="chart-memory"
        series={[{ label: 'Used', values: h.mem, color: '#1c7c3a' }]} />
      <Chart title="Network (KiB/s)" unit="KiB/s" testId="chart-network" digits={2}
        series={[{ label: 'In', values: h.rx, color: '#a66300' }, { label: 'Out', values: h.tx, color: '#7a3ea1' }]} />
    </div>
  );
}
