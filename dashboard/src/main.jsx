import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import '@xterm/xterm/css/xterm.css';
import './style.css';
import { session } from './api.js';
import { follow } from './stream.js';
import { apply, reset, setState, useLive } from './store.js';
import { useRoute } from './router.js';
import { Login } from './views/Login.jsx';
import { ContainerList } from './views/ContainerList.jsx';
import { ContainerDetail } from './views/ContainerDetail.jsx';
import { CreateForm } from './views/CreateForm.jsx';
import { CapsuleList } from './views/CapsuleList.jsx';
import { CapsuleCreate } from './views/CapsuleCreate.jsx';
import { Hosts } from './views/Hosts.jsx';
import { Events } from './views/Events.jsx';
import { Images, Networks, Quotas, Registries, Services, Volumes } from './views/Resources.jsx';
import { allowed, forget, useMe } from './me.js';

// [route, label, the /dashboard/api/me control it needs (null: everyone)]
const PAGES = [
  ['containers', 'Containers', null],
  ['capsules', 'Capsules', null],
  ['create', 'Create', null],
  ['networks', 'Networks', null],
  ['volumes', 'Volumes', null],
  ['images', 'Images', 'images'],
  ['registries', 'Registries', null],
  ['quotas', 'Quotas', null],
  ['services', 'Services', 'services'],
  ['hosts', 'Hosts', 'hosts'],
  ['events', 'Events', null],
];

function Status() {
  const live = useLive();
  const text = live.state === 'live' ? 'Live' : live.state === 'connecting' ? 'Connecting…' : `Disconnected: ${live.error || ''}`;
  return <span class={`stream stream-${live.state}`} role="status" aria-live="polite">{text}</span>;
}

function Shell({ onLogout }) {
  const route = useRoute();
  const me = useMe();
  const [allProjects, setAllProjects] = useState(sessionStorage.getItem('berth.all') === '1');

  useEffect(() => {
    reset();
    return follow({ allProjects, onEvent: apply, onState: setState });
  }, [allProjects]);

  const toggle = (e) => {
    sessionStorage.setItem('berth.all', e.currentTarget.checked ? '1' : '0');
    setAllProjects(e.currentTarget.checked);
  };

  let page;
  if (route.page === 'containers' && route.id) page = <ContainerDetail uuid={route.id} />;
  else if (route.page === 'containers') page = <ContainerList />;
  else if (route.page === 'create') page = <CreateForm />;
  else if (route.page === 'capsules') page = <CapsuleList search={route.query.made} />;
  else if (route.page === 'capsule-create') page = <CapsuleCreate />;
  else if (route.page === 'hosts') page = <Hosts />;
  else if (route.page === 'networks') page = <Networks allProjects={allProjects} />;
  else if (route.page === 'volumes') page = <Volumes allProjects={allProjects} />;
  else if (route.page === 'images') page = <Images />;
  else if (route.page === 'registries') page = <Registries allProjects={allProjects} />;
  else if (route.page === 'quotas') page = <Quotas me={me} />;
  else if (route.page === 'services') page = <Services />;
  else if (route.page === 'events') page = <Events allProjects={allProjects} />;
  else page = <p>No such page.</p>;

  return (
    <div class="shell">
      <header>
        <a class="brand" href="#/containers">berth</a>
        <nav aria-label="Main">
          {PAGES.filter(([, , needs]) => !needs || !me || allowed(me, needs)).map(([id, label]) => (
            <a href={`#/${id}`} aria-current={route.page === id ? 'page' : undefined}>{label}</a>
          ))}
        </nav>
        <label class="all-projects">
          <input type="checkbox" checked={allProjects} onChange={toggle} /> All projects
        </label>
        <Status />
        <button type="button" onClick={onLogout}>Log out</button>
      </header>
      <main>{page}</main>
    </div>
  );
}

function App() {
  const [token, setToken] = useState(session.token);
  useEffect(() => {
    const onUnauthorized = () => { forget(); session.token = null; setToken(null); };
    window.addEventListener('berth-unauthorized', onUnauthorized);
    return () => window.removeEventListener('berth-unauthorized', onUnauthorized);
  }, []);
  if (!token) return <Login onToken={(t) => { forget(); session.token = t; setToken(t); }} />;
  return <Shell onLogout={() => { forget(); session.token = null; setToken(null); }} />;
}

render(<App />, document.getElementById('app'));
