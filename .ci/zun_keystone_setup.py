"""The Keystone and Neutron side of zun-ci.sh, idempotent: run with Zun's venv.

  setup ZUN_URL NEUTRON_URL PLACEMENT_URL REGION [CINDER_URL]
      project "service", user "zun" (admin there), region REGION and, in it, the catalog
      entries container -> ZUN_URL, network -> NEUTRON_URL, placement -> PLACEMENT_URL
      and volumev3 -> CINDER_URL (Keystone fills its %(project_id)s with the token's)
  network NAME CIDR
      a Neutron network and subnet owned by the CI's admin project (Zun's default network)
  cleanup-ports
      delete the Neutron ports Zun made (device_owner compute:zun)
  services-up ZUN_URL
      exit 0 when Zun's API answers a token, zun-compute reports up, and the CNI daemon's
      and the websocket proxy's ports accept connections

Keystone: the CI's (BERTH_KEYSTONE_URL, admin/admin). Neutron: noauth, no project header
= admin (BERTH_NEUTRON_URL).
"""
import os
import socket
import sys

import requests

KEYSTONE = os.environ.get('BERTH_KEYSTONE_URL', 'http://127.0.0.1:5001/v3').rstrip('/')
NEUTRON = os.environ.get('BERTH_NEUTRON_URL', 'http://127.0.0.1:9696').rstrip('/')
USER, PASSWORD = 'zun', 'zun-ci'


def admin_token():
    body = {'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': 'admin', 'domain': {'id': 'default'}, 'password': 'admin'}}},
        'scope': {'project': {'name': 'admin', 'domain': {'id': 'default'}}}}}
    r = requests.post(KEYSTONE + '/auth/tokens', json=body, timeout=10)
    r.raise_for_status()
    return r.headers['X-Subject-Token'], r.json()['token']['project']['id']


class Keystone:
    def __init__(self):
        self.token, self.admin_project = admin_token()

    def call(self, method, path, **kw):
        r = requests.request(method, KEYSTONE + path, headers={'X-Auth-Token': self.token},
                             timeout=10, **kw)
        if r.status_code >= 400 and r.status_code != 404:
            sys.exit(f'keystone {method} {path}: {r.status_code} {r.text[:300]}')
        return r

    def find(self, kind, **filters):
        items = self.call('GET', f'/{kind}', params=filters).json()[kind]
        return items[0] if items else None

    def ensure(self, kind, one, body, **filters):
        found = self.find(kind, **filters)
        if found:
            return found
        return self.call('POST', f'/{kind}', json={one: body}).json()[one]


SERVICES = (('container', 'zun'), ('network', 'neutron'), ('placement', 'placement'),
            ('volumev3', 'cinderv3'))


def setup(zun_url, neutron_url, placement_url, region, cinder_url=None):
    ks = Keystone()
    project = ks.ensure('projects', 'project', {'name': 'service', 'domain_id': 'default'},
                        name='service', domain_id='default')
    user = ks.find('users', name=USER, domain_id='default')
    if user:
        ks.call('PATCH', '/users/{}'.format(user['id']), json={'user': {'password': PASSWORD}})
    else:
        user = ks.call('POST', '/users', json={'user': {
            'name': USER, 'password': PASSWORD, 'domain_id': 'default',
            'default_project_id': project['id']}}).json()['user']
    role = ks.find('roles', name='admin')
    ks.call('PUT', '/projects/{}/users/{}/roles/{}'.format(project['id'], user['id'], role['id']))
    if ks.call('GET', f'/regions/{region}').status_code == 404:
        ks.call('POST', '/regions', json={'region': {'id': region}})
    urls = (zun_url + '/v1', neutron_url, placement_url, cinder_url)
    for (stype, name), url in zip(SERVICES, urls):
        if url is None:
            continue
        service = ks.ensure('services', 'service', {'type': stype, 'name': name},
                            type=stype, name=name)
        for interface in ('public', 'internal', 'admin'):
            endpoint = ks.find('endpoints', service_id=service['id'], interface=interface,
                               region_id=region)
            if endpoint is None:
                ks.call('POST', '/endpoints', json={'endpoint': {
                    'service_id': service['id'], 'interface': interface, 'url': url,
                    'region_id': region}})
            elif endpoint['url'] != url:
                ks.call('PATCH', '/endpoints/{}'.format(endpoint['id']), json={'endpoint': {'url': url}})


def teardown(region):
    """Take out of the catalog what setup put in for ``region``: its endpoints, each
    service left without any endpoint (setup's zun, neutron and placement entries when
    nothing else uses them, and its cinderv3), and the region. Another stack's entries for the same
    service types (the project's own Neutron, Placement, a berth registered as
    container) stay, and a second 'container' service no longer makes
    `openstack endpoint create ... container` ambiguous for the docs tests."""
    ks = Keystone()
    for stype, name in SERVICES:
        service = ks.find('services', type=stype, name=name)
        if service is None:
            continue
        endpoints = ks.call('GET', '/endpoints', params={'service_id': service['id']}).json()['endpoints']
        for endpoint in endpoints:
            if endpoint.get('region_id') == region:
                ks.call('DELETE', '/endpoints/{}'.format(endpoint['id']))
        if all(e.get('region_id') == region for e in endpoints):
            ks.call('DELETE', '/services/{}'.format(service['id']))
    ks.call('DELETE', f'/regions/{region}')


def network(name, cidr):
    _, admin_project = admin_token()

    def call(method, path, **kw):
        r = requests.request(method, NEUTRON + '/v2.0' + path, timeout=30, **kw)
        if r.status_code >= 400:
            sys.exit(f'neutron {method} {path}: {r.status_code} {r.text[:300]}')
        return r.json()

    nets = call('GET', '/networks', params={'name': name, 'project_id': admin_project})['networks']
    net = nets[0] if nets else call('POST', '/networks', json={'network': {
        'name': name, 'project_id': admin_project, 'admin_state_up': True}})['network']
    if not call('GET', '/subnets', params={'network_id': net['id']})['subnets']:
        call('POST', '/subnets', json={'subnet': {
            'name': name, 'network_id': net['id'], 'project_id': admin_project,
            'ip_version': 4, 'cidr': cidr, 'enable_dhcp': False}})
    print(net['id'])


def cleanup_ports():
    r = requests.get(NEUTRON + '/v2.0/ports', params={'device_owner': 'compute:zun'}, timeout=30)
    r.raise_for_status()
    for port in r.json()['ports']:
        requests.delete(NEUTRON + '/v2.0/ports/' + port['id'], timeout=30)


def port_open(port):
    try:
        socket.create_connection(('127.0.0.1', port), timeout=2).close()
        return True
    except OSError:
        return False


def services_up(zun_url):
    token, _ = admin_token()
    headers = {'X-Auth-Token': token, 'OpenStack-API-Version': 'container 1.40'}
    r = requests.get(zun_url + '/v1/services', headers=headers, timeout=5)
    if r.status_code != 200:
        return 1
    up = [s for s in r.json().get('services', [])
          if s.get('binary') == 'zun-compute' and s.get('state') == 'up']
    hosts = requests.get(zun_url + '/v1/hosts', headers=headers, timeout=5)
    up = up and hosts.status_code == 200 and hosts.json().get('hosts')   # the node is recorded
    ports = [int(os.environ.get(k, d)) for k, d in (('BERTH_ZUN_CNI_PORT', 9036),
                                                   ('BERTH_ZUN_WSPROXY_PORT', 6784))]
    return 0 if up and all(port_open(p) for p in ports) else 1


if __name__ == '__main__':
    action, args = sys.argv[1], sys.argv[2:]
    if action == 'setup':
        setup(*args)
    elif action == 'network':
        network(*args)
    elif action == 'teardown':
        teardown(*args)
    elif action == 'cleanup-ports':
        cleanup_ports()
    elif action == 'services-up':
        try:
            sys.exit(services_up(*args))
        except requests.RequestException:
            sys.exit(1)
    else:
        sys.exit(__doc__)
