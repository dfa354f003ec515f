// What the event stream says: every container and capsule the caller sees, by uuid.

import { useEffect, useState } from 'preact/hooks';

const listeners = new Set();

export const live = {
  containers: new Map(),
  capsules: new Map(),
  state: 'connecting',
  error: null,
  version: 0,
};

function notify() {
  live.version += 1;
  for (const fn of listeners) fn(live.version);
}

export function apply(name, data) {
  if (name === 'snapshot') {
    live.containers = new Map(data.containers.map((c) => [c.uuid, c]));
    live.capsules = new Map(data.capsules.map((c) => [c.uuid, c]));
  } else if (name === 'changes') {
    for (const c of data.containers) live.containers.set(c.uuid, c);
    for (const c of data.capsules) live.capsules.set(c.uuid, c);
    for (const uuid of data.deleted) { live.containers.delete(uuid); live.capsules.delete(uuid); }
  }
  notify();
}

export function setState(state, error) {
  live.state = state;
  live.error = error ? error.message : null;
  notify();
}

export function reset() {
  live.state = 'connecting';
  live.containers = new Map();
  live.capsules = new Map();
  notify();
}

/** Re-render the calling component whenever the live lists change. */
export function useLive() {
  const [, setVersion] = useState(live.version);
  useEffect(() => {
    listeners.add(setVersion);
    return () => listeners.delete(setVersion);
  }, []);
  return live;
}
