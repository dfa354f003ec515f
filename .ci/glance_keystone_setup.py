"""The Keystone side of glance-ci.sh, idempotent: run with Glance's venv.

  glance_keystone_setup.py USER PASSWORD GLANCE_URL
      project "service", user USER (admin there, with PASSWORD: keystonemiddleware
      validates tokens with it), and the catalog's service "image" (glance) with its
      public, internal and admin endpoints GLANCE_URL in region RegionOne

Keystone: the CI's (BERTH_KEYSTONE_URL, admin/admin in project admin).
"""
import os
import sys

import requests

KEYSTONE = os.environ.get('BERTH_KEYSTONE_URL', 'http://127.0.0.1:5001/v3').rstrip('/')
REGION = 'RegionOne'


def admin_token():
    body = {'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': 'admin', 'domain': {'id': 'default'}, 'password': 'admin'}}},
        'scope': {'project': {'name': 'admin', 'domain': {'id': 'default'}}}}}
    r = requests.post(KEYSTONE + '/auth/tokens', json=body, timeout=10)
    r.raise_for_status()
    return r.headers['X-Subject-Token']


def call(token, method, path, **kw):
    r = requests.request(method, KEYSTONE + path, headers={'X-Auth-Token': token},
                         timeout=10, **kw)
    if r.status_code >= 400 and r.status_code != 404:
        sys.exit(f'keystone {method} {path}: {r.status_code} {r.text[:300]}')
    return r


def find(token, kind, **filters):
    items = call(token, 'GET', f'/{kind}', params=filters).json()[kind]
    return items[0] if items else None


def ensure(token, kind, one, body, **filters):
    return find(token, kind, **filters) or \
        call(token, 'POST', f'/{kind}', json={one: body}).json()[one]


def main(user_name, password, glance_url):
    token = admin_token()
    project = ensure(token, 'projects', 'project', {'name': 'service', 'domain_id': 'default'},
                     name='service', domain_id='default')
    user = find(token, 'users', name=user_name, domain_id='default')
    if user:
        call(token, 'PATCH', f"/users/{user['id']}", json={'user': {'password': password}})
    else:
        user = call(token, 'POST', '/users', json={'user': {
            'name': user_name, 'password': password, 'domain_id': 'default',
            'default_project_id': project['id']}}).json()['user']
    role = find(token, 'roles', name='admin')
    call(token, 'PUT', f"/projects/{project['id']}/users/{user['id']}/roles/{role['id']}")
    service = ensure(token, 'services', 'service', {'type': 'image', 'name': 'glance'},
                     type='image', name='glance')
    for interface in ('public', 'internal', 'admin'):
        endpoint = find(token, 'endpoints', service_id=service['id'], interface=interface,
                        region_id=REGION)
        if endpoint is None:
            call(token, 'POST', '/endpoints', json={'endpoint': {
                'service_id': service['id'], 'interface': interface, 'url': glance_url,
                'region_id': REGION}})
        elif endpoint['url'] != glance_url:
            call(token, 'PATCH', f"/endpoints/{endpoint['id']}",
                 json={'endpoint': {'url': glance_url}})
    print(f"user {user_name} ({user['id']}), service image -> {glance_url}")


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
