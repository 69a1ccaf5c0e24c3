// institutions create | list | revoke: institutions (schools, tutoring services) that reach the data of the students
// who consent to them, by token exchange (server/oauth/token-exchange.ts). An institution is a confidential OAuth
// client of its own kind; its secret is printed once, as the last line of stdout, and stored only as a hash.
import { disableInstitution, listInstitutions } from '../../db/queries/oauth.ts';
import { registerClient } from '../../server/oauth/clients.ts';
import { redirectUrisOption, scopesOption } from './client-options.ts';
import { note, parse, print, printable, table, timestamp, UsageError, withDb } from './shared.ts';

export async function createInstitution(args: string[]): Promise<void> {
  const { values } = parse(args, {
    name: { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    scopes: { type: 'string' },
  });
  const name = values.name?.trim();
  if (!name) throw new UsageError('--name NAME is required (students see it on the consent page)');
  // Where the consent page sends the student back to: the institution's own page (the code it carries may be ignored).
  const redirectUris = redirectUrisOption(values['redirect-uri']);
  if (redirectUris.length === 0)
    throw new UsageError('give at least one --redirect-uri: students come back there after consenting');
  const scopes = scopesOption(values.scopes);

  const client = await withDb((db) =>
    registerClient(db, { name, redirect_uris: redirectUris, scopes, confidential: true, institution: true }),
  );
  note(
    `created institution "${name}" with scopes ${scopes.join(' ')}\n` +
      'client_id and client_secret below; the secret is shown once and stored only as a hash\n',
  );
  print(client.client_id);
  print(client.client_secret!); // a confidential client always has one
}

export async function listAllInstitutions(args: string[]): Promise<void> {
  parse(args, {});
  const institutions = await withDb((db) => listInstitutions(db));
  if (institutions.length === 0) {
    print('no institutions yet; create one with: npm run cli -- institutions create --name NAME --redirect-uri URL');
    return;
  }
  const rows = institutions.map((i) => [
    i.id,
    printable(i.name),
    String(i.students),
    timestamp(i.created_at),
    i.disabled_at ? `revoked ${timestamp(i.disabled_at)}` : 'active',
    i.scopes.join(' '),
  ]);
  print(table(['CLIENT ID', 'NAME', 'STUDENTS', 'CREATED', 'STATUS', 'SCOPES'], rows));
}

/** For good: the credential is refused, every student's grant to it is revoked and its tokens stop at once. */
export async function revokeInstitution(args: string[]): Promise<void> {
  const { positionals } = parse(args, {}, ['CLIENT_ID (see institutions list)']);
  const clientId = positionals[0]!;
  const revoked = await withDb((db) => disableInstitution(db, clientId, new Date()));
  if (!revoked)
    throw new Error(
      `no active institution has the client id ${printable(clientId)} (see: npm run cli -- institutions list)`,
    );
  print(`revoked ${clientId}`);
}
