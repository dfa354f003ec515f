import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { go } from '../router.js';

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

// The field a Zun validation error names ("Invalid input for field 'memory'...").
function fieldOf(message) {
  const m = /field '([a-z_]+)/.exec(message || '');
  return m ? m[1] : null;
}

/** The fields users set most; everything is checked by the API itself. */
export function CreateForm() {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  async function submit(e) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const body = { image: f.get('image').trim() };
    const name = f.get('name').trim();
    if (name) body.name = name;
    const command = splitCommand(f.get('command'));
    if (command.length) body.command = command;
    for (const key of ['cpu', 'memory']) {
      const v = f.get(key).trim();
      if (v) body[key] = key === 'cpu' ? Number(v) || v : v;
    }
    const env = f.get('environment').split('\n').map((l) => l.trim()).filter(Boolean);
    if (env.length) body.environment = Object.fromEntries(env.map((l) => { const at = l.indexOf('='); return at < 0 ? [l, ''] : [l.slice(0, at), l.slice(at + 1)]; }));
    if (f.get('interactive')) { body.interactive = true; body.tty = true; }
    const restart = f.get('restart');
    if (restart) body.restart_policy = { Name: restart };
    const pull = f.get('pull');
    if (pull) body.image_pull_policy = pull;
    setBusy(true);
    setError(null);
    try {
      const made = await call('POST', '/v1/containers', { query: { run: f.get('run') ? 'true' : 'false' }, body });
      go(`/containers/${made.uuid}`);
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  }

  const bad = fieldOf(error);
  const invalid = (name) => (bad === name ? 'true' : undefined);
  return (
    <section class="page" aria-labelledby="create-title">
      <h1 id="create-title">Create a container</h1>
      <form class="create" onSubmit={submit} noValidate>
        <label>Image <input name="image" required aria-invalid={invalid('image')} placeholder="local/busybox" /></label>
        <label>Name <input name="name" aria-invalid={invalid('name')} placeholder="generated when empty" /></label>
        <label>Command <input name="command" aria-invalid={invalid('command')} placeholder="sleep 3600" /></label>
        <label>CPU <input name="cpu" inputMode="decimal" aria-invalid={invalid('cpu')} placeholder="1.0" /></label>
        <label>Memory (MiB) <input name="memory" inputMode="numeric" aria-invalid={invalid('memory')} placeholder="512" /></label>
        <label>Environment (one KEY=value a line) <textarea name="environment" rows={3} aria-invalid={invalid('environment')} /></label>
        <label>Restart policy <select name="restart">
          <option value="">no (default)</option><option value="always">always</option>
          <option value="on-failure">on-failure</option><option value="unless-stopped">unless-stopped</option>
        </select></label>
        <label>Image pull policy (admins) <select name="pull">
          <option value="">the service's default</option><option value="ifnotpresent">ifnotpresent</option>
          <option value="always">always</option><option value="never">never</option>
        </select></label>
        <label class="check"><input type="checkbox" name="interactive" /> Interactive with a TTY</label>
        <label class="check"><input type="checkbox" name="run" checked /> Start it once created</label>
        {error && <p class="error" role="alert" id="create-error">{error}</p>}
        <button type="submit" disabled={busy}>Create</button>
      </form>
    </section>
  );
}
