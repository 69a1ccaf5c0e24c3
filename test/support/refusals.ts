// The refusals every general-surface operation on an {id} owes: 401 without credentials, 403 insufficient_scope
// for a token without the operation's scope, 404 for another student's id exactly as for an unknown one, 400 for
// an id that is not a UUID. One call per operation proves all five.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../server/auth/principal.ts';
import { generalApp, type Student } from './general-app.ts';

type Api = Awaited<ReturnType<typeof generalApp>>['api'];

export interface IdOperation {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: (id: string) => string;
  body?: Record<string, unknown>;
  /** A scope that is not the one the operation needs. */
  otherScope: Scope;
  /** Creates what the id names, owned by `owner`, and returns the id. */
  create: (api: Api, owner: Student) => Promise<string>;
}

export async function assertIdRefusals(operation: IdOperation): Promise<void> {
  const { api, newStudent } = await generalApp();
  const [alice, bob, narrow] = await Promise.all([
    newStudent(),
    newStudent(),
    newStudent({ scopes: [operation.otherScope] }),
  ]);
  const id = await operation.create(api, alice);
  const call = (path: string) => {
    const request = api[operation.method](path);
    return operation.body === undefined ? request : request.send(operation.body);
  };
  await call(operation.path(id)).expect(401);
  const forbidden = await call(operation.path(id)).set(narrow.headers).expect(403);
  assert.equal(forbidden.body.code, 'insufficient_scope');
  const others = await call(operation.path(id)).set(bob.headers).expect(404);
  const unknown = await call(operation.path(randomUUID())).set(alice.headers).expect(404);
  assert.equal(others.body.code, 'not_found');
  assert.equal(others.body.detail, unknown.body.detail, "another student's id answers exactly like an unknown one");
  await call(operation.path('not-a-uuid')).set(alice.headers).expect(400);
  // A uuid with a urn:uuid: prefix passes ajv-formats' check but not PostgreSQL's uuid type: the spec's check must
  // refuse it.
  await call(operation.path(`urn:uuid:${randomUUID()}`))
    .set(alice.headers)
    .expect(400);
}
