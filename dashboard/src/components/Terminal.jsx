import { useEffect, useRef, useState } from 'preact/hooks';
import { Terminal as XTerm } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { call } from '../api.js';

/**
 * A shell in the container: an interactive exec through the API (a single-use console
 * token in the URL it answers), then berth-wsproxy's WebSocket carries raw terminal
 * bytes both ways; size changes go through execute_resize.
 */
export function Terminal({ uuid, command = 'sh' }) {
  const [session, setSession] = useState(0);
  return <Shell key={session} uuid={uuid} command={command} onAgain={() => setSession((n) => n + 1)} />;
}

function Shell({ uuid, command, onAgain }) {
  const holder = useRef(null);
  const [state, setState] = useState('opening');
  const [error, setError] = useState(null);

  useEffect(() => {
    const term = new XTerm({ convertEol: false, cursorBlink: true, fontSize: 14,
      screenReaderMode: true, fontFamily: 'monospace' });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(holder.current);
    fit.fit();
    let ws = null;
    let execId = null;
    let closed = false;
    const encoder = new TextEncoder();

    const resize = () => {
      fit.fit();
      if (execId) {
        call('POST', `/v1/containers/${uuid}/execute_resize`,
          { query: { exec_id: execId, w: term.cols, h: term.rows } }).catch(() => {});
      }
    };

    (async () => {
      try {
        const answer = await call('POST', `/v1/containers/${uuid}/execute`,
          { query: { command, run: 'false', interactive: 'true' } });
        if (closed) return;
        execId = answer.exec_id;
        ws = new WebSocket(answer.proxy_url, ['binary']);
        ws.binaryType = 'arraybuffer';
        ws.onopen = () => { setState('open'); resize(); term.focus(); };
        ws.onmessage = (e) => term.write(typeof e.data === 'string' ? e.data : new Uint8Array(e.data));
        ws.onclose = () => { if (!closed) setState('closed'); };
        ws.onerror = () => setError('The console connection failed.');
        term.onData((data) => { if (ws && ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(data)); });
      } catch (err) {
        setError(err.message);
        setState('closed');
      }
    })();

    const observer = new ResizeObserver(() => resize());
    observer.observe(holder.current);
    return () => { closed = true; observer.disconnect(); if (ws) ws.close(); term.dispose(); };
  }, [uuid, command]);

  return (
    <div class="terminal">
      <p class="hint" role="status">
        {state === 'opening' ? 'Opening a shell…' : state === 'open' ? `Shell open (${command}); Tab and keys go to the terminal.` : 'The shell has ended.'}
      </p>
      {error && <p class="error" role="alert">{error}</p>}
      {state === 'closed' && <button type="button" onClick={onAgain}>Open a new shell</button>}
      <div ref={holder} class="xterm-holder" data-testid="terminal" aria-label="Terminal" />
    </div>
  );
}
