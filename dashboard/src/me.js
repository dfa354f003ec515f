// Who the caller is and which admin-only controls the policy lets them use
// (GET /dashboard/api/me), read once per login.

import { useEffect, useState } from 'preact/hooks';
import { call } from './api.js';

let pending = null;

export function forget() { pending = null; }

export function useMe() {
  const [me, setMe] = useState(null);
  useEffect(() => {
    if (!pending) pending = call('GET', '/dashboard/api/me').catch((err) => { pending = null; throw err; });
    let live = true;
    pending.then((m) => { if (live) setMe(m); }, () => {});
    return () => { live = false; };
  }, []);
  return me;
}

export const allowed = (me, what) => !!(me && me.allowed && me.allowed[what]);
