import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api.js';

const EVERY = 1000;   // ms between two reads of what is new

// Docker's timestamps: RFC 3339 with up to nine fraction digits; a line's key is
// [epoch seconds, nanoseconds], so lines already shown are never shown twice.
function stamp(line) {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z\s?(.*)$/s.exec(line);
  if (!m) return null;
  const seconds = Date.parse(`${m[1]}Z`) / 1000;
  const nanos = Number(((m[2] || '') + '000000000').slice(0, 9));
  return { seconds, nanos, text: m[3] };
}

const after = (a, b) => a.seconds > b.seconds || (a.seconds === b.seconds && a.nanos > b.nanos);

/**
 * The container's logs, followed: the API's logs call with timestamps, then every
 * second only what came since the last line's second (``since``), lines already shown skipped.
 */
export function Logs({ uuid, running }) {
  const [lines, setLines] = useState([]);
  const [error, setError] = useState(null);
  const [follow, setFollow] = useState(true);
  const last = useRef(null);
  const box = useRef(null);

  useEffect(() => {          // another container: start from its last lines
    last.current = null;
    setLines([]);
  }, [uuid]);

  useEffect(() => {
    let stopped = false;
    let timer = null;
    async function read() {
      try {
        const query = { timestamps: 'true' };
        // Whole seconds: the lines of the last second come again and are skipped below.
        if (last.current) query.since = String(last.current.seconds);
        else query.tail = '1000';
        const text = await call('GET', `/v1/containers/${uuid}/logs`, { query });
        if (stopped) return;
        const fresh = [];
        for (const raw of (text || '').split('\n')) {
          if (!raw) continue;
          const s = stamp(raw);
          if (!s) { fresh.push(raw); continue; }
          if (last.current && !after(s, last.current)) continue;
          last.current = s;
          fresh.push(s.text);
        }
        if (fresh.length) setLines((old) => old.concat(fresh).slice(-5000));
        setError(null);
      } catch (err) {
        if (!stopped) setError(err.message);
      }
      if (!stopped && follow) timer = setTimeout(read, EVERY);
    }
    read();
    return () => { stopped = true; clearTimeout(timer); };
  }, [uuid, follow]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);

  return (
    <div class="logs">
      <label><input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} /> Follow</label>
      {!running && <span class="hint"> (the container is not running: no new lines will come)</span>}
      {error && <p class="error" role="alert">{error}</p>}
      <pre ref={box} tabIndex={0} aria-label="Container logs" data-testid="logs">{lines.join('\n')}</pre>
    </div>
  );
}
