// Hash routes: #/containers, #/containers/<uuid>, #/create, #/capsules, #/hosts.

import { useEffect, useState } from 'preact/hooks';

export function parseRoute(hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] || 'containers', id: parts[1] || null };
}

export function useRoute() {
  const [route, setRoute] = useState(parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function go(path) { window.location.hash = path; }
