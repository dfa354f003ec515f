// Hash routes: #/containers, #/containers/<uuid>, #/create, #/capsules, #/hosts...;
// a "?key=value" after the path is the route's query (#/capsules?made=web).

import { useEffect, useState } from 'preact/hooks';

export function parseRoute(hash) {
  const [path, search] = hash.replace(/^#\/?/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const query = Object.fromEntries(new URLSearchParams(search || ''));
  return { page: parts[0] || 'containers', id: parts[1] || null, query };
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
