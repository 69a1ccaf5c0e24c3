// keys create | list | revoke: partner API keys. A key is printed once, at creation; listings show prefixes only.
import { DEFAULT_KEY_LIMITS, listApiKeys, revokeApiKey } from '../../db/queries/api-keys.ts';
import { issueApiKey, PUBLIC_PREFIX_SHAPE } from '../../server/auth/api-keys.ts';
import { integerOption, note, parse, print, printable, table, timestamp, UsageError, withDb } from './shared.ts';

/** The limit columns are PostgreSQL `integer`s. */
const MAX_LIMIT = 2_147_483_647;

export async function create(args: string[]): Promise<void> {
  const { values } = parse(args, {
    name: { type: 'string' },
    'per-minute': { type: 'string' },
    'per-day': { type: 'string' },
  });
  const name = values.name?.trim();
  if (!name) throw new UsageError('--name NAME is required (it tells keys apart in `keys list`)');
  const perMinute = integerOption('--per-minute', values['per-minute'], 1, MAX_LIMIT) ?? DEFAULT_KEY_LIMITS.per_minute;
  const perDay = integerOption('--per-day', values['per-day'], 1, MAX_LIMIT) ?? DEFAULT_KEY_LIMITS.per_day;
  if (perDay < perMinute) throw new UsageError(`--per-day (${perDay}) must be at least --per-minute (${perMinute})`);

  const { key, record } = await withDb((db) => issueApiKey(db, { name, per_minute: perMinute, per_day: perDay }));
  // The summary goes to stderr so that stdout is the key alone: KEY=$(npm run -s cli -- keys create ... | tail -1).
  note(
    `created API key ${record.prefix} "${printable(record.name)}": ${record.per_minute} requests per minute, ${record.per_day} per day\n` +
      'the key is shown once, below, and stored only as a hash: store it now\n',
  );
  print(key);
}

export async function list(args: string[]): Promise<void> {
  parse(args, {});
  const keys = await withDb((db) => listApiKeys(db));
  if (keys.length === 0) {
    print('no API keys yet; create one with: npm run cli -- keys create --name NAME');
    return;
  }
  const rows = keys.map((k) => [
    k.prefix,
    printable(k.name),
    String(k.per_minute),
    String(k.per_day),
    timestamp(k.created_at),
    k.last_used_at ? timestamp(k.last_used_at) : 'never',
    k.revoked_at ? 'revoked' : 'active',
  ]);
  print(table(['PREFIX', 'NAME', 'PER MINUTE', 'PER DAY', 'CREATED', 'LAST USED', 'STATUS'], rows));
}

export async function revoke(args: string[]): Promise<void> {
  const { positionals } = parse(args, {}, ['PREFIX (see keys list)']);
  const prefix = positionals[0]!; // parse guarantees the one positional
  // The argument is not echoed when malformed: it may be a whole key pasted by mistake.
  if (!PUBLIC_PREFIX_SHAPE.test(prefix))
    throw new UsageError('PREFIX is svc_live_ followed by 8 letters or digits, as shown by keys list');
  const revoked = await withDb((db) => revokeApiKey(db, prefix));
  if (!revoked) throw new Error(`no active API key has the prefix ${prefix} (see: npm run cli -- keys list)`);
  print(`revoked ${prefix}`);
}
