import { useRef, useState } from 'preact/hooks';
import { call } from '../api.js';
import { go } from '../router.js';
import { lineOf, refusalPlace } from '../create/template.js';

const EXAMPLE = `kind: capsule
metadata:
  name: web
spec:
  restartPolicy: Always
  containers:
  - image: local/busybox
    name: http
    command: [httpd, -f, -p, "8080"]
    resources: {requests: {cpu: 0.1, memory: 64}}
    ports: [{containerPort: 8080}]
  - image: local/busybox
    name: probe
    command: [sleep, "3600"]
`;

/**
 * A capsule from a template (YAML or JSON, as `zun capsule-create -f` sends it): the
 * text goes to POST /v1/capsules as it is, the API parses and checks it, and a
 * refusal is shown with the path it names and that path's line, selected.
 */
export function CapsuleCreate() {
  const [text, setText] = useState(EXAMPLE);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const box = useRef(null);

  const place = refusalPlace(error);
  const line = place.line || (place.path ? lineOf(text, place.path) : null);

  function select(n) {
    const el = box.current;
    if (!el || !n) return;
    const lines = el.value.split('\n');
    const start = lines.slice(0, n - 1).reduce((sum, l) => sum + l.length + 1, 0);
    el.focus();
    el.setSelectionRange(start, start + (lines[n - 1] || '').length);
  }

  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const made = await call('POST', '/v1/capsules', { body: { template: text } });
      go(`/capsules?made=${encodeURIComponent(made.name || made.uuid)}`);
    } catch (err) {
      setError(err.message);
      const p = refusalPlace(err.message);
      requestAnimationFrame(() => select(p.line || (p.path ? lineOf(text, p.path) : null)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="page" aria-labelledby="capsule-create-title">
      <div class="page-head">
        <h1 id="capsule-create-title">Create a capsule</h1>
        <a href="#/create">or a container</a>
      </div>
      <form class="create wide" onSubmit={submit} noValidate>
        <p class="hint" id="template-help">A capsule template in YAML or JSON (<code>kind: capsule</code>,{' '}
          <code>metadata.name</code>, <code>spec.containers</code>); berth checks it whole and names
          what it refuses by its path.</p>
        <label>Template
          <textarea ref={box} name="template" rows={18} spellcheck={false} class="code" value={text}
            onInput={(e) => setText(e.currentTarget.value)} aria-describedby={error ? 'capsule-error template-help' : 'template-help'}
            aria-invalid={error ? 'true' : undefined} />
        </label>
        {error && (
          <div class="error" role="alert" id="capsule-error">
            {(place.path || line) && (
              <p class="at" data-testid="refused-at">
                {place.path && <>At <code>{place.path}</code></>}{line && <> (line {line})</>}
                {line && <button type="button" class="link" onClick={() => select(line)}>Show the line</button>}
              </p>
            )}
            <p>{error}</p>
          </div>
        )}
        <div class="actions">
          <button type="submit" disabled={busy}>Create the capsule</button>
          <button type="button" onClick={() => { setText(EXAMPLE); setError(null); }}>Start from the example</button>
        </div>
      </form>
    </section>
  );
}
