// The live list: Server-Sent Events read with fetch (EventSource cannot send a token).

import { apiUrl, headers } from './api.js';

function parseFrame(frame) {
  let name = 'message';
  const data = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) continue;
    const at = line.indexOf(':');
    const field = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
    if (field === 'event') name = value;
    else if (field === 'data') data.push(value);
  }
  return data.length ? { name, data: JSON.parse(data.join('\n')) } : null;
}

/**
 * Follow /dashboard/api/events; reconnects with a growing pause. ``onEvent(name, data)``
 * gets each event, ``onState(state, error)`` 'connecting' | 'live' | 'error'. Returns a
 * function that closes it.
 */
export function follow({ allProjects, onEvent, onState }) {
  let closed = false;
  let controller = null;
  let pause = 500;

  async function once() {
    controller = new AbortController();
    onState('connecting');
    const response = await fetch(apiUrl('/dashboard/api/events', { all_projects: allProjects ? 'true' : '' }), {
      headers: headers({ Accept: 'text/event-stream' }), signal: controller.signal,
    });
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      try {
        const body = await response.json();
        message = (body.errors && body.errors[0] && (body.errors[0].detail || body.errors[0].title)) || message;
      } catch { /* not JSON */ }
      const err = new Error(message);
      err.status = response.status;
      throw err;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const ev = parseFrame(frame);
        if (ev) {
          if (ev.name === 'snapshot') { pause = 500; onState('live'); }
          onEvent(ev.name, ev.data);
        }
      }
    }
  }

  (async () => {
    while (!closed) {
      try {
        await once();
        if (!closed) onState('error', new Error('the event stream ended'));
      } catch (err) {
        if (closed) return;
        onState('error', err);
        if (err.status === 401) window.dispatchEvent(new Event('berth-unauthorized'));
        if (err.status === 401 || err.status === 403) return;   // retrying cannot help
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 10000);
    }
  })();

  return () => { closed = true; if (controller) controller.abort(); };
}
