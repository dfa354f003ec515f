// The create form's text fields turned into the API's body, and the API's refusal
// turned back into the field (and row) it names. Pure functions: the API checks
// everything; these only shape what the person typed.

/** Split a command line as a POSIX shell would for plain words and quotes. */
export function splitCommand(text) {
  const words = [];
  let word = null;
  let quote = null;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < text.length) { word += text[i + 1]; i += 1; }
      else word += ch;
    } else if (ch === '"' || ch === "'") { quote = ch; word = word || ''; }
    else if (ch === '\\' && i + 1 < text.length) { word = (word || '') + text[i + 1]; i += 1; }
    else if (/\s/.test(ch)) { if (word !== null) { words.push(word); word = null; } }
    else word = (word || '') + ch;
  }
  if (word !== null) words.push(word);
  return words;
}

/** "KEY=value" lines as an object (a line without '=' is a key with an empty value). */
export function pairs(text) {
  const lines = (text || '').split('\n').map((l) => l.trim()).filter(Boolean);
  if (!lines.length) return null;
  return Object.fromEntries(lines.map((l) => {
    const at = l.indexOf('=');
    return at < 0 ? [l, ''] : [l.slice(0, at), l.slice(at + 1)];
  }));
}

/** Words separated by commas or blanks. */
export function words(text) {
  return (text || '').split(/[\s,]+/).filter(Boolean);
}

/** "80/tcp, 53/udp 8080" as Zun's exposed_ports object. */
export function exposedPorts(text) {
  const list = words(text);
  return list.length ? Object.fromEntries(list.map((p) => [p, {}])) : null;
}

/** The network rows: {network, v4, v6} -> Zun's nets entries (blank rows left out). */
export function nets(rows) {
  return rows.filter((r) => r.network.trim() || r.v4.trim() || r.v6.trim()).map((r) => {
    const entry = { network: r.network.trim() };
    if (r.v4.trim()) entry['v4-fixed-ip'] = r.v4.trim();
    if (r.v6.trim()) entry['v6-fixed-ip'] = r.v6.trim();
    return entry;
  });
}

/** The mount rows: {source, size, destination} -> Zun's mounts entries. */
export function mounts(rows) {
  return rows.filter((r) => r.source.trim() || r.size.trim() || r.destination.trim()).map((r) => {
    const entry = { destination: r.destination.trim() };
    if (r.source.trim()) entry.source = r.source.trim();
    if (r.size.trim()) entry.size = r.size.trim();
    return entry;
  });
}

/** A healthcheck from its four fields; null when no command is given. */
export function healthcheck(f) {
  const cmd = (f.cmd || '').trim();
  if (!cmd && !f.interval && !f.retries && !f.timeout) return null;
  const out = { cmd };
  for (const key of ['interval', 'retries', 'timeout']) {
    const v = (f[key] || '').trim();
    if (v) out[key] = /^\d+$/.test(v) ? Number(v) : v;
  }
  return out;
}

const FIELDS = ['image', 'name', 'command', 'cpu', 'memory', 'environment', 'labels', 'hints',
  'restart_policy', 'image_pull_policy', 'nets', 'mounts', 'exposed_ports', 'security_groups',
  'host', 'auto_remove', 'healthcheck', 'interactive', 'tty'];

// A row's keys as the API names them, and the form's names for them.
const ROW_KEYS = { network: 'network', 'v4-fixed-ip': 'v4', 'v6-fixed-ip': 'v6',
  source: 'source', size: 'size', destination: 'destination' };

/** The key of a row a refusal names in quotes ('v4-fixed-ip'), if one. */
function rowKey(text) {
  const m = /'(network|v4-fixed-ip|v6-fixed-ip|source|size|destination)'/.exec(text);
  return m ? ROW_KEYS[m[1]] : null;
}

/**
 * Where a refusal points: [{field, index, key}] for the fields it names (``key``:
 * the one input of a row it names, else the whole row). Zun's schema
 * messages say "Invalid input for field 'nets[0]'"; berth's own checks start
 * "mounts[1]: ..." or "Invalid nets[0]: ..."; a rule across two fields names both.
 */
export function located(message) {
  const text = message || '';
  const field = /field '([a-z_]+)(?:\[(\d+)\])?/.exec(text);
  if (field && FIELDS.includes(field[1])) {
    const index = field[2] === undefined ? null : Number(field[2]);
    return [{ field: field[1], index, key: index === null ? null : rowKey(text) }];
  }
  const row = /\b(nets|mounts)\[(\d+)\]/.exec(text);
  if (row) return [{ field: row[1], index: Number(row[2]), key: rowKey(text) }];
  const quoted = [...text.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]).filter((f) => FIELDS.includes(f));
  return [...new Set(quoted)].map((f) => ({ field: f, index: null }));
}
