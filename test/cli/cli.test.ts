// The operator CLI as operators run it: a child process against a database of its own (a throwaway database on
// the DATABASE_URL server, else a fresh PGlite directory), which on the embedded one the data commands reach through
// the socket of a server holding it (besideServer). The cases run in order, as one operator's session.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, describeTarget, type Db, type DbTarget } from '../../db/connect.ts';
import { migrations } from '../../db/migrations/index.ts';
import { DEFAULT_KEY_LIMITS } from '../../db/queries/api-key-defaults.ts';
import { DEMO_SEED } from '../../db/seed/demo-seed.ts';
import { createThrowawayDatabase } from '../../db/throwaway-database.ts';
import { accessTokenIssuer } from '../../server/auth/access-tokens.ts';
import { databaseSigningKeyStore, fileSigningKeyStore } from '../../server/auth/signing-key-store.ts';
import { storedSigningKeys, type SigningKeyStore } from '../../server/auth/signing-keys.ts';
import { insertGrant, insertRefreshToken } from '../../db/queries/oauth.ts';
import { verifyPassword } from '../../server/auth/passwords.ts';
import { registerClient } from '../../server/oauth/clients.ts';
import { ALL_SCOPES } from '../../server/auth/scopes.ts';
import { envelopeOf } from '../../services/events/emit.ts';
import { contractClient } from '../support/contract.ts';
import { assertEventConforms } from '../support/event-contract.ts';
import { buildApp } from '../support/partner-app.ts';
import { secretBox } from '../../server/auth/secret-box.ts';
import { signingSecrets } from '../../services/webhooks/secrets.ts';
import { CLI } from '../support/run-node.ts';
import { serveCliSocket, type CliSocket } from '../../app/cli/server-socket.ts';
import { TEST_SECRETS_KEY } from '../support/server-process.ts';
import { loadConfig } from '../../app/config.ts';
import { describeStartupError } from '../../app/startup-errors.ts';
import { casesInSteps, PROCESS_STEP_BOUND_MS, stepEnded } from '../support/step-bound.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const KEY_SHAPE = /^svc_live_[0-9A-Za-z]{32}$/;

interface Run {
  /** The exit code; null when the child was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The bound of one step of a case (a CLI run, a look at the database: test/support/step-bound.ts), and of each hook.
 * Alone, a step takes a second or two at most; a case of five such steps took past 120 s in a loaded CI trial (load
 * mostly 22 to 38). A step given no end within five minutes is a hung process or database, not a slow machine.
 */
const STEP_BOUND_MS = PROCESS_STEP_BOUND_MS;
/** Every case of this file is bounded step by step, not as a whole. */
const it = casesInSteps(STEP_BOUND_MS);

/** Whether this process serves the CLI's socket as a server would (besideServer). */
let playingServer = false;

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  // Beside a server (besideServer), the server this process plays was started with the settings the command is given.
  if (playingServer) replaceEnvironment(env);
  return new Promise((resolve) => {
    // Killed a little before the case's bound, so that the failure shows what the command printed.
    const options = { cwd: root, env, timeout: STEP_BOUND_MS - 10_000 };
    execFile(process.execPath, [...CLI, ...args], options, (error, stdout, stderr) => {
      stepEnded();
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

describe('cli', function () {
  this.timeout(STEP_BOUND_MS);

  let target: DbTarget;
  /** The child's environment: the test database and nothing else that could change what the CLI does. */
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.DEBUG;
  delete env.JWT_PRIVATE_KEY;
  env.SECRETS_KEY = TEST_SECRETS_KEY;
  let cleanUp = async () => {};

  before(async () => {
    const serverUrl = process.env.DATABASE_URL;
    if (serverUrl) {
      const throwaway = await createThrowawayDatabase(serverUrl, 'cli_test');
      target = { databaseUrl: throwaway.url };
      env.DATABASE_URL = throwaway.url;
      cleanUp = throwaway.drop;
    } else {
      const dir = await mkdtemp(join(tmpdir(), 'cli-test-'));
      target = { dataDir: dir };
      env.DATA_DIR = dir;
      cleanUp = () => rm(dir, { recursive: true, force: true });
    }
  });
  after(async () => {
    await cleanUp();
  });

  /**
   * Looks at the database between CLI runs; closed again at once, since PGlite allows one process per directory.
   * Each look at the embedded database opens it (~0.5 s of CPU): the looks a case makes with no CLI run between them
   * share one (the helpers below take the open database as `db`), and while this process holds the database for the
   * CLI (besideServer) they use that.
   */
  async function inspect<T>(use: (db: Db) => Promise<T>): Promise<T> {
    try {
      if (held) return await use(held);
      const db = connect(target);
      try {
        return await use(db);
      } finally {
        await db.destroy();
      }
    } finally {
      stepEnded();
    }
  }

  /** The embedded database while this process holds it for the CLI (besideServer). */
  let held: Db | undefined;

  /**
   * The suite's commands as an operator runs them while `npm start` runs on the embedded database: PGlite lets one
   * process open a data directory, so the server holds it and runs the command lines each CLI process sends to its
   * socket (app/cli/server-socket.ts, whose own suite is test/cli/server-socket.test.ts). Here this process holds the
   * database and serves that socket, as the server does, with the settings the CLI is given: the commands and the
   * looks between them then need no open of their own (each ~0.5 s of PGlite's start). A command line that carries a
   * setting of its own (WEBHOOK_ALLOW_PRIVATE_TARGETS) runs beside a server started with it: a server's commands read
   * the server's settings, not the CLI's: each command line's settings become this process's before it is sent. One
   * such server serves every case from the demo seed to the signing keys (one open of the database, not one per group
   * of cases). The first command (migrate, twice) and the refusals open the database themselves, as with no server; on
   * PostgreSQL every command does, reading its own settings.
   */
  function besideServer() {
    let socket: CliSocket | undefined;
    let settings: NodeJS.ProcessEnv | undefined;
    before(async () => {
      if (!('dataDir' in target)) return;
      // A server's commands read its settings: this process's environment, the CLI's for the suite's time (each
      // command's own as it is sent: cli()).
      settings = replaceEnvironment(env);
      held = connect(target);
      socket = await serveCliSocket(target.dataDir, held, describeTarget(target));
      playingServer = true;
    });
    after(async () => {
      playingServer = false;
      await socket?.close();
      await held?.destroy();
      held = undefined;
      if (settings) replaceEnvironment(settings);
    });
  }

  /** `use` on `db` when a look is open already, else in a look of its own. */
  const lookAt = <T>(db: Db | undefined, use: (db: Db) => Promise<T>): Promise<T> => (db ? use(db) : inspect(use));

  async function count(
    db: Db,
    table: 'api_keys' | 'universities' | 'holidays' | 'users' | 'flashcard_decks' | 'ai_messages' | 'study_rooms',
  ): Promise<number> {
    return Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  }

  /** Whether the first case has migrated the database (a case run alone with --grep migrates it itself). */
  let migrated = false;

  it('migrate applies every migration, then says the database is up to date', async () => {
    const first = await cli(['migrate'], env);
    assert.equal(first.code, 0, first.stderr);
    // A new embedded database is a copy of the migrated template (db/pglite-template.ts): nothing is left to apply.
    const expected =
      'databaseUrl' in target ? Object.keys(migrations).map((name) => `applied ${name}`) : ['already up to date'];
    assert.deepEqual(first.stdout.trimEnd().split('\n'), expected);

    const second = await cli(['migrate'], env);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, 'already up to date\n');
    migrated = true;
  });

  describe('beside a server (this process holding the database and serving its socket)', () => {
    besideServer();

    it('seed --demo prints the counts of what it stored', async () => {
      const run = await cli(['seed', '--demo', '--seed', '7'], env);
      assert.equal(run.code, 0, run.stderr);
      const stored = await inspect(async (db) => ({
        universities: await count(db, 'universities'),
        holidays: await count(db, 'holidays'),
        users: await count(db, 'users'),
        decks: await count(db, 'flashcard_decks'),
        messages: await count(db, 'ai_messages'),
        rooms: await count(db, 'study_rooms'),
      }));
      assert.ok(stored.users > 0);
      assert.equal(
        run.stdout,
        `reference data: ${stored.universities} universities, ${stored.holidays} holidays\n` +
          `demo data (seed 7): ${stored.users} users, ${stored.decks} decks, ${stored.messages} tutor messages, ${stored.rooms} study rooms\n`,
      );
    });

    let key = '';
    let prefix = '';

    describe('the data commands, beside a server', () => {
      it('keys create prints the key alone as the last stdout line and stores only its hash', async () => {
        const run = await cli(
          ['keys', 'create', '--name', 'cli test key', '--per-minute', '5', '--per-day', '100'],
          env,
        );
        assert.equal(run.code, 0, run.stderr);
        key = run.stdout.trimEnd().split('\n').at(-1) ?? '';
        assert.match(key, KEY_SHAPE);
        prefix = key.slice(0, 'svc_live_'.length + 8);
        assert.match(
          run.stderr,
          new RegExp(`created API key ${prefix} "cli test key": 5 requests per minute, 100 per day`),
        );
        assert.match(run.stderr, /shown once.*store it now/);

        const rows = await inspect((db) => db.selectFrom('api_keys').selectAll().execute());
        assert.equal(rows.length, 1);
        const row = rows[0]!;
        assert.deepEqual(
          {
            prefix: row.prefix,
            name: row.name,
            per_minute: row.per_minute,
            per_day: row.per_day,
            revoked_at: row.revoked_at,
          },
          { prefix, name: 'cli test key', per_minute: 5, per_day: 100, revoked_at: null },
        );
        assert.equal(row.key_hash, createHash('sha256').update(key).digest('hex'));
        const stored = JSON.stringify(rows);
        assert.ok(!stored.includes(key.slice('svc_live_'.length)), 'the random part of the key is stored somewhere');
      });

      it('keys list shows the key by prefix, never the key or its hash', async () => {
        const run = await cli(['keys', 'list'], env);
        assert.equal(run.code, 0, run.stderr);
        const [header, line, ...rest] = run.stdout.trimEnd().split('\n');
        assert.match(header ?? '', /^PREFIX\s+NAME\s+PER MINUTE\s+PER DAY\s+CREATED\s+LAST USED\s+STATUS$/);
        assert.match(
          line ?? '',
          new RegExp(
            `^${prefix}\\s+cli test key\\s+5\\s+100\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+never\\s+active$`,
          ),
        );
        assert.deepEqual(rest, []);
        const output = run.stdout + run.stderr;
        assert.ok(!output.includes(key.slice('svc_live_'.length)), 'keys list printed the key');
        assert.ok(!output.includes(createHash('sha256').update(key).digest('hex')), 'keys list printed the hash');
      });

      it('keys revoke revokes an active key once; a second revoke fails', async () => {
        const first = await cli(['keys', 'revoke', prefix], env);
        assert.equal(first.code, 0, first.stderr);
        assert.equal(first.stdout, `revoked ${prefix}\n`);
        const row = await inspect((db) =>
          db.selectFrom('api_keys').select('revoked_at').where('prefix', '=', prefix).executeTakeFirstOrThrow(),
        );
        assert.ok(row.revoked_at instanceof Date);

        const second = await cli(['keys', 'revoke', prefix], env);
        assert.equal(second.code, 1);
        assert.match(second.stderr, new RegExp(`^error: no active API key has the prefix ${prefix}`, 'm'));
      });

      it('holidays enable de --years 2026 stores the German holidays of 2026', async () => {
        const run = await cli(['holidays', 'enable', 'de', '--years', '2026'], env);
        assert.equal(run.code, 0, run.stderr);
        const { dates, rows, enabled } = await inspect(async (db) => ({
          dates: await db
            .selectFrom('holidays')
            .select('on_date')
            .distinct()
            .where('country_code', '=', 'DE')
            .execute(),
          rows: Number(
            (
              await db
                .selectFrom('holidays')
                .select((eb) => eb.fn.countAll<number>().as('n'))
                .where('country_code', '=', 'DE')
                .executeTakeFirstOrThrow()
            ).n,
          ),
          enabled: await db
            .selectFrom('holiday_countries')
            .select('country_code')
            .where('country_code', '=', 'DE')
            .executeTakeFirst(),
        }));
        assert.ok(rows >= 9, `only ${rows} German holidays`);
        assert.ok(dates.every((d) => d.on_date.startsWith('2026-')));
        assert.ok(enabled);
        assert.equal(run.stdout, `stored ${rows} holidays of DE for 2026\n`);
      });

      it('users create stores an Argon2id hash of a generated password, printed once as the last line; a taken e-mail fails', async () => {
        const run = await cli(
          [
            'users',
            'create',
            '--email',
            'kim@example.com',
            '--nickname',
            'kim_cli',
            '--country',
            'KZ',
            '--time-zone',
            'Asia/Almaty',
          ],
          env,
        );
        assert.equal(run.code, 0, run.stderr);
        const password = run.stdout.trimEnd().split('\n').at(-1) ?? '';
        assert.match(password, /^[\w-]{16}$/);
        const row = await inspect((db) =>
          db
            .selectFrom('users')
            .select(['password_hash', 'country_code', 'time_zone'])
            .where('email', '=', 'kim@example.com')
            .executeTakeFirstOrThrow(),
        );
        assert.match(row.password_hash!, /^\$argon2id\$/);
        assert.deepEqual([row.country_code, row.time_zone], ['kz', 'Asia/Almaty']);
        const again = await cli(['users', 'create', '--email', 'KIM@example.com', '--nickname', 'kim_other'], env);
        assert.equal(again.code, 1);
        assert.match(again.stderr, /e-mail KIM@example.com exists already/);
      });

      /** What kim's personal key is told by an app on the CLI's database, opened after the CLI has exited. */
      let kimKey = '';
      async function kimProfile(db?: Db) {
        return lookAt(db, async (db) => {
          const res = await contractClient(await buildApp({ db }))
            .get('/api/users/me')
            .set('X-Service-API-Key', kimKey)
            .expect(200);
          return {
            plan: res.body.plan,
            limits: res.body.limits,
            warnings: res.body.warnings,
            policy: String(res.headers['ratelimit-policy']),
          };
        });
      }

      it('users key prints a personal key of the student once, as the last line, with the scopes asked for (by default all but keys:manage)', async () => {
        const run = await cli(
          ['users', 'key', 'KIM@example.com', '--name', 'cli test', '--scopes', 'profile:read'],
          env,
        );
        assert.equal(run.code, 0, run.stderr);
        kimKey = run.stdout.trimEnd().split('\n').at(-1) ?? '';
        assert.match(kimKey, KEY_SHAPE);
        const { row, profile } = await inspect(async (db) => ({
          row: await db
            .selectFrom('api_keys')
            .select(['name', 'scopes', 'grant_id', 'key_hash'])
            .where('prefix', '=', kimKey.slice(0, 17))
            .executeTakeFirstOrThrow(),
          profile: await kimProfile(db),
        }));
        assert.deepEqual([row.name, row.scopes, row.grant_id], ['cli test', ['profile:read'], null]);
        assert.equal(row.key_hash, createHash('sha256').update(kimKey).digest('hex'), 'only the hash is stored');
        assert.equal(profile.plan, 'free');
        const byDefault = await cli(['users', 'key', 'kim@example.com'], env);
        assert.equal(byDefault.code, 0, byDefault.stderr);
        const scopes = await inspect(
          async (db) =>
            (
              await db
                .selectFrom('api_keys')
                .select('scopes')
                .where('prefix', '=', byDefault.stdout.trimEnd().split('\n').at(-1)!.slice(0, 17))
                .executeTakeFirstOrThrow()
            ).scopes,
        );
        assert.deepEqual(
          scopes,
          ALL_SCOPES.filter((scope) => scope !== 'keys:manage'),
        );
      });

      it('users plan changes the plan, and the next request counts under its limits', async () => {
        const plus = await cli(['users', 'plan', 'KIM@example.com', '--plan', 'plus'], env);
        assert.equal(plus.code, 0, plus.stderr);
        assert.equal(
          plus.stdout,
          'KIM@example.com is on the plus plan: 600 requests a minute, 100000 a day, 200 an hour on /api/ai/*\n',
        );
        const afterPlus = await kimProfile();
        assert.deepEqual(
          [afterPlus.plan, afterPlus.limits],
          ['plus', { per_minute: 600, per_day: 100_000, ai_per_hour: 200 }],
        );
        assert.match(afterPlus.policy, /"minute"; q=600;/);

        const contract = await cli(
          [
            'users',
            'plan',
            'kim@example.com',
            '--plan',
            'contract',
            '--per-minute',
            '1500',
            '--per-day',
            '50000',
            '--ai-per-hour',
            '90',
          ],
          env,
        );
        assert.equal(contract.code, 0, contract.stderr);
        // A renegotiated contract changes one limit; the others are kept.
        const renegotiated = await cli(
          ['users', 'plan', 'kim@example.com', '--plan', 'contract', '--per-minute', '2000'],
          env,
        );
        assert.equal(renegotiated.code, 0, renegotiated.stderr);
        const afterContract = await kimProfile();
        assert.deepEqual(
          [afterContract.plan, afterContract.limits],
          ['contract', { per_minute: 2000, per_day: 50_000, ai_per_hour: 90 }],
        );
        assert.match(afterContract.policy, /"minute"; q=2000;/);
      });

      it('users plan refuses a contract without agreed limits and an unknown e-mail', async () => {
        const free = await cli(['users', 'plan', 'kim@example.com', '--plan', 'free'], env);
        assert.equal(free.code, 0, free.stderr);
        const noLimits = await cli(['users', 'plan', 'kim@example.com', '--plan', 'contract', '--per-day', '100'], env);
        assert.equal(noLimits.code, 2);
        assert.match(noLimits.stderr, /needs its agreed limits: give --per-minute, --ai-per-hour/);
        const unknown = await cli(['users', 'plan', 'nobody@example.com', '--plan', 'plus'], env);
        assert.equal(unknown.code, 1);
        assert.match(unknown.stderr, /no account has the e-mail nobody@example.com/);
        const after = await kimProfile();
        assert.deepEqual([after.plan, after.limits], ['free', { per_minute: 60, per_day: 10_000, ai_per_hour: 20 }]);
      });

      it('users warn stores the warning, shows it on the profile and emits user.warned', async () => {
        const run = await cli(
          ['users', 'warn', 'kim@example.com', '--reason', '  Repeated automated requests to the tutor.  '],
          env,
        );
        assert.equal(run.code, 0, run.stderr);
        const id = run.stdout.trim();
        const { warnings, events } = await inspect(async (db) => ({
          warnings: (await kimProfile(db)).warnings,
          events: await kimEvents('user.warned', db),
        }));
        assert.equal(warnings.length, 1);
        assert.deepEqual(
          { id: warnings[0].id, reason: warnings[0].reason },
          { id, reason: 'Repeated automated requests to the tutor.' },
        );
        const [event] = events;
        assert.deepEqual(event!.data.object, warnings[0]);
      });

      it('users reset-password prints a new password once, ends every sign-in (its refresh tokens too) and keeps the own personal keys', async () => {
        const before = await inspect(async (db) => {
          const { id } = await db
            .selectFrom('users')
            .select('id')
            .where('email', '=', 'kim@example.com')
            .executeTakeFirstOrThrow();
          const client = await registerClient(db, {
            name: 'Phone app',
            redirect_uris: ['https://app.example/cb'],
            scopes: ['profile:read'],
            confidential: false,
          });
          const grant_id = await insertGrant(db, {
            client_id: client.client_id,
            user_id: id,
            scopes: ['profile:read'],
          });
          await insertRefreshToken(db, {
            token_hash: 'phone-refresh-token-hash',
            grant_id,
            expires_at: new Date(Date.now() + 86_400_000),
          });
          return (await db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow())
            .password_hash!;
        });
        const run = await cli(['users', 'reset-password', 'KIM@example.com'], env);
        assert.equal(run.code, 0, run.stderr);
        const password = run.stdout.trimEnd().split('\n').at(-1) ?? '';
        assert.match(password, /^[\w-]{16}$/);
        const after = await inspect(async (db) => ({
          hash: (
            await db
              .selectFrom('users')
              .select('password_hash')
              .where('email', '=', 'kim@example.com')
              .executeTakeFirstOrThrow()
          ).password_hash!,
          refresh: await db
            .selectFrom('oauth_refresh_tokens')
            .select('revoked_at')
            .where('token_hash', '=', 'phone-refresh-token-hash')
            .executeTakeFirstOrThrow(),
          grant: await db
            .selectFrom('oauth_grants')
            .innerJoin('oauth_refresh_tokens', 'oauth_refresh_tokens.grant_id', 'oauth_grants.id')
            .select('oauth_grants.revoked_reason')
            .where('oauth_refresh_tokens.token_hash', '=', 'phone-refresh-token-hash')
            .executeTakeFirstOrThrow(),
          plan: (await kimProfile(db)).plan,
        }));
        assert.notEqual(after.hash, before);
        assert.equal(await verifyPassword(after.hash, password), true);
        assert.notEqual(after.refresh.revoked_at, null);
        assert.equal(
          after.grant.revoked_reason,
          'password_reset',
          'the sign-in itself ends, not only its refresh tokens',
        );
        assert.equal(after.plan, 'free', 'the personal key still works');
        const unknown = await cli(['users', 'reset-password', 'nobody@example.com'], env);
        assert.equal(unknown.code, 1);
        assert.match(unknown.stderr, /no account has the e-mail nobody@example.com/);
      });

      it('payments record changes the plan and emits payment.succeeded once per provider event id', async () => {
        // The same provider event twice, its currency written in either case.
        const recordInvoice = (currency: string) =>
          cli(
            [
              'payments',
              'record',
              'kim@example.com',
              '--plan',
              'plus',
              '--amount',
              '4990',
              '--currency',
              currency,
              '--provider-event-id',
              'inv-2026-0001',
            ],
            env,
          );
        const run = await recordInvoice('usd');
        assert.equal(run.code, 0, run.stderr);
        const paymentId = run.stdout.trim();
        assert.equal((await kimProfile()).plan, 'plus');
        const again = await recordInvoice('USD');
        assert.equal(again.code, 0, again.stderr);
        assert.equal(again.stdout.trim(), paymentId);
        assert.match(again.stderr, /recorded before; nothing changed/);
        const generated = await cli(
          ['payments', 'record', 'kim@example.com', '--plan', 'plus', '--amount', '100', '--currency', 'KZT'],
          env,
        );
        assert.equal(generated.code, 0, generated.stderr);

        const events = await kimEvents('payment.succeeded');
        assert.equal(events.length, 2);
        assert.deepEqual(
          { ...events[0]!.data.object, paid_at: undefined },
          {
            id: paymentId,
            plan: 'plus',
            amount: 4990,
            currency: 'USD',
            provider: 'manual',
            provider_event_id: 'inv-2026-0001',
            paid_at: undefined,
          },
        );
        assert.match(String(events[1]!.data.object.provider_event_id), /^manual-[0-9a-f-]{36}$/);

        // A contract is paid for only once its limits are agreed.
        const contract = await cli(
          ['payments', 'record', 'kim@example.com', '--plan', 'contract', '--amount', '100000', '--currency', 'USD'],
          env,
        );
        assert.equal(contract.code, 2);
        assert.match(contract.stderr, /set them with users plan first/);
        assert.equal((await kimEvents('payment.succeeded')).length, 2);
      });

      /** kim's stored events of one kind, oldest first, each checked against the spec. */
      async function kimEvents(type: string, db?: Db) {
        const rows = await lookAt(db, (db) =>
          db
            .selectFrom('events')
            .innerJoin('users', 'users.id', 'events.user_id')
            .select(['events.id', 'events.type', 'events.user_id', 'events.data', 'events.created_at'])
            .where('users.email', '=', 'kim@example.com')
            .where('events.type', '=', type)
            .orderBy('events.created_at')
            .orderBy('events.id')
            .execute(),
        );
        const events = rows.map(envelopeOf);
        for (const event of events) assertEventConforms(event);
        return events as Array<{ data: { object: Record<string, unknown> } }>;
      }

      it('clients create prints a confidential client’s id and secret once, storing only the secret’s hash', async () => {
        const run = await cli(
          [
            'clients',
            'create',
            '--name',
            'Sync',
            '--confidential',
            '--owner',
            'kim@example.com',
            '--scopes',
            'tasks:read tasks:write',
          ],
          env,
        );
        assert.equal(run.code, 0, run.stderr);
        const [clientId, secret] = run.stdout.trimEnd().split('\n').slice(-2);
        const row = await inspect((db) =>
          db
            .selectFrom('oauth_clients')
            .select(['secret_hash', 'grants', 'scopes'])
            .where('id', '=', clientId!)
            .executeTakeFirstOrThrow(),
        );
        assert.equal(row.secret_hash, createHash('sha256').update(secret!).digest('hex'));
        assert.deepEqual(row.scopes, ['tasks:read', 'tasks:write']);
        assert.ok(row.grants.includes('client_credentials'));
        const unknownScope = await cli(
          ['clients', 'create', '--name', 'X', '--redirect-uri', 'https://a.example/cb', '--scopes', 'root'],
          env,
        );
        assert.equal(unknownScope.code, 2);
      });
    });

    describe('clients webhook, beside a server started with the setting its command line carries', () => {
      it('clients webhook set|show|rotate|remove manage an app’s one endpoint; its secret is printed once and stored sealed', async () => {
        const created = await cli(
          ['clients', 'create', '--name', 'Planner', '--redirect-uri', 'https://planner.example/cb'],
          env,
        );
        const clientId = created.stdout.trimEnd().split('\n').at(-1)!;
        const box = secretBox(Buffer.from(TEST_SECRETS_KEY, 'base64'));
        const endpointRow = () =>
          inspect((db) =>
            db.selectFrom('webhook_endpoints').selectAll().where('client_id', '=', clientId).executeTakeFirst(),
          );

        const loopback = await cli(['clients', 'webhook', 'set', clientId, '--url', 'https://127.0.0.1/hooks'], env);
        assert.equal(loopback.code, 2);
        // The refusal names the switch an operator with a local receiver needs (and that the server reads it at start).
        const refusal =
          /^error: clients webhook set: --url .*public address \(.*WEBHOOK_ALLOW_PRIVATE_TARGETS=1.*\) \(webhook_url_not_public\)$/m;
        assert.match(loopback.stderr, refusal);
        const allowed = { ...env, WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' };
        const set = await cli(
          [
            'clients',
            'webhook',
            'set',
            clientId,
            '--url',
            'http://127.0.0.1:9/hooks',
            '--events',
            'task.created task.completed',
          ],
          allowed,
        );
        assert.equal(set.code, 0, set.stderr);
        const secret = set.stdout.trimEnd().split('\n').at(-1)!;
        assert.match(secret, /^whsec_/);
        let row = (await endpointRow())!;
        assert.deepEqual(
          [row.url, row.event_types, row.enabled, row.user_id],
          ['http://127.0.0.1:9/hooks', ['task.created', 'task.completed'], true, null],
        );
        assert.ok(!JSON.stringify(row).includes(secret.slice(6)), 'the secret is stored sealed');
        assert.deepEqual(signingSecrets(box, row, new Date()), [secret]);

        const changed = await cli(
          ['clients', 'webhook', 'set', clientId, '--url', 'http://127.0.0.1:9/other'],
          allowed,
        );
        assert.equal(changed.code, 0, changed.stderr);
        assert.doesNotMatch(changed.stdout, /whsec_/);
        row = (await endpointRow())!;
        assert.equal(row.url, 'http://127.0.0.1:9/other');
        assert.ok(
          row.event_types.includes('exam.updated') && !row.event_types.includes('webhook.test'),
          'without --events: every kind an app can receive',
        );
        assert.deepEqual(
          signingSecrets(box, row, new Date()),
          [secret],
          'set on an existing endpoint keeps its secret',
        );

        const shown = await cli(['clients', 'webhook', 'show', clientId], env);
        assert.equal(shown.code, 0, shown.stderr);
        assert.match(shown.stdout, /^url\s+http:\/\/127\.0\.0\.1:9\/other$/m);
        assert.match(shown.stdout, /^status\s+enabled$/m);
        assert.doesNotMatch(shown.stdout, /whsec_/);

        const rotated = await cli(['clients', 'webhook', 'rotate', clientId], env);
        assert.equal(rotated.code, 0, rotated.stderr);
        const newSecret = rotated.stdout.trimEnd().split('\n').at(-1)!;
        assert.deepEqual(
          signingSecrets(box, (await endpointRow())!, new Date()),
          [newSecret, secret],
          'both sign during the overlap',
        );

        const removed = await cli(['clients', 'webhook', 'remove', clientId], env);
        assert.equal(removed.code, 0, removed.stderr);
        assert.equal(await endpointRow(), undefined);
        const gone = await cli(['clients', 'webhook', 'show', clientId], env);
        assert.equal(gone.code, 1);
        assert.match(gone.stderr, /has no webhook endpoint/);
        assert.equal(
          (await cli(['clients', 'webhook', 'set', 'no-such-client', '--url', 'http://127.0.0.1:9/hooks'], allowed))
            .code,
          1,
        );
        const incomplete = await cli(['clients', 'webhook'], env);
        assert.equal(incomplete.code, 2);
        assert.match(incomplete.stderr, /^error: clients webhook needs a command: set, show, rotate, remove$/m);
      });
    });

    describe('institutions and signing keys, beside a server', () => {
      /** The institution the next two cases share (one operator's session): its client id, and one student's grant to it. */
      const school = { clientId: '', secret: '', grantId: '' };
      const schoolClient = (db?: Db) =>
        lookAt(db, (db) =>
          db
            .selectFrom('oauth_clients')
            .select(['secret_hash', 'grants', 'scopes', 'kind', 'disabled_at', 'owner_user_id'])
            .where('id', '=', school.clientId)
            .executeTakeFirstOrThrow(),
        );

      it('institutions create|list: the secret is printed once and stored only as a hash; the list counts consenting students', async () => {
        const created = await cli(
          [
            'institutions',
            'create',
            '--name',
            'Almaty School 42',
            '--redirect-uri',
            'https://school42.example/consented',
            '--scopes',
            'profile:read tasks:read',
          ],
          env,
        );
        assert.equal(created.code, 0, created.stderr);
        const [clientId, secret] = created.stdout.trimEnd().split('\n').slice(-2) as [string, string];
        Object.assign(school, { clientId, secret });
        const { row, grantId } = await inspect(async (db) => {
          const row = await schoolClient(db);
          // One student consented (the grant row is what the consent page leaves).
          const kim = await db
            .selectFrom('users')
            .select('id')
            .where('email', '=', 'kim@example.com')
            .executeTakeFirstOrThrow();
          return {
            row,
            grantId: await insertGrant(db, { client_id: clientId, user_id: kim.id, scopes: ['profile:read'] }),
          };
        });
        school.grantId = grantId;
        assert.equal(row.secret_hash, createHash('sha256').update(secret).digest('hex'));
        assert.deepEqual(
          [row.kind, row.scopes, row.owner_user_id, row.disabled_at],
          ['institution', ['profile:read', 'tasks:read'], null, null],
        );
        assert.ok(row.grants.includes('urn:ietf:params:oauth:grant-type:token-exchange'));

        const listed = await cli(['institutions', 'list'], env);
        assert.equal(listed.code, 0, listed.stderr);
        assert.match(
          listed.stdout,
          new RegExp(`^${clientId}\\s+Almaty School 42\\s+1\\s+\\S+\\s+active\\s+profile:read tasks:read$`, 'm'),
        );
        assert.ok(!listed.stdout.includes(secret));
      });

      it('institutions revoke refuses the credential for good and ends every student’s grant to it', async () => {
        const { clientId, grantId } = school;
        const revoked = await cli(['institutions', 'revoke', clientId], env);
        assert.equal(revoked.code, 0, revoked.stderr);
        const { client, grant } = await inspect(async (db) => ({
          client: await schoolClient(db),
          grant: await db
            .selectFrom('oauth_grants')
            .select(['revoked_at', 'revoked_reason'])
            .where('id', '=', grantId)
            .executeTakeFirstOrThrow(),
        }));
        assert.ok(client.disabled_at);
        assert.ok(grant.revoked_at);
        assert.equal(grant.revoked_reason, 'client_disabled');
        const listed = await cli(['institutions', 'list'], env);
        assert.equal(listed.code, 0, listed.stderr);
        assert.match(listed.stdout, new RegExp(`^${clientId}\\s+Almaty School 42\\s+0\\s+\\S+\\s+revoked `, 'm'));
        const again = await cli(['institutions', 'revoke', clientId], env);
        assert.equal(again.code, 1);
        assert.match(again.stderr, /^error: no active institution has the client id/m);
      });

      it('institutions create and revoke refuse a bad command line with exit code 2', async () => {
        const cases = [
          ['institutions', 'create', '--name', 'X'],
          ['institutions', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb', '--scopes', 'root'],
          ['institutions', 'revoke'],
        ];
        const runs = await Promise.all(cases.map((args) => cli(args, env)));
        runs.forEach((run, i) => {
          assert.equal(run.code, 2, `${cases[i]!.join(' ')}: ${run.stderr}`);
          assert.match(run.stderr, /^error: institutions (create|revoke): /);
        });
      });

      it('keys rotate-signing: the new key signs, and a token signed by the previous one still verifies', async () => {
        // A process of the service, before the rotation: it signs a token with the key it knows.
        const tokenTtlSeconds = 900;
        // Claims of the shape the verifier accepts: uuid subject and grant (a signature alone does not vouch for shapes).
        const [userId, grantId] = [randomUUID(), randomUUID()];
        // The store the CLI and the server use: the file in DATA_DIR, or the table (opened only then: PGlite admits one
        // process).
        const withStore = <T>(use: (store: SigningKeyStore) => Promise<T>): Promise<T> =>
          'dataDir' in target
            ? use(fileSigningKeyStore(target.dataDir))
            : inspect((db) => use(databaseSigningKeyStore(db, Buffer.from(TEST_SECRETS_KEY, 'base64'))));
        // Run alone (--grep), this case must see a migrated database too.
        if (!migrated) assert.equal((await cli(['migrate'], env)).code, 0);
        const before = await withStore(async (store) => {
          const keys = await storedSigningKeys(store, {
            tokenTtlSeconds,
            now: () => new Date(),
            onReloadError: () => {},
          });
          keys.stop();
          const issuer = accessTokenIssuer(keys, { issuer: 'http://cli.test', now: () => new Date() });
          return {
            kid: keys.signer().kid,
            token: (
              await issuer.issue({ user_id: userId, client_id: 'c', scopes: ['profile:read'], grant_id: grantId })
            ).token,
          };
        });
        const run = await cli(['keys', 'rotate-signing'], env);
        assert.equal(run.code, 0, run.stderr);
        const kid = /^new signing key (\S+)$/.exec(run.stdout.trim())?.[1];
        assert.ok(kid && kid !== before.kid, run.stdout);
        assert.match(run.stderr, new RegExp(`the previous key ${before.kid} verifies until \\d{4}-`));
        // A process started after the rotation signs with the new key and still accepts the old token; the JWKS has both.
        await withStore(async (store) => {
          const keys = await storedSigningKeys(store, {
            tokenTtlSeconds,
            now: () => new Date(),
            onReloadError: () => {},
          });
          keys.stop();
          assert.equal(keys.signer().kid, kid);
          assert.deepEqual(
            keys
              .jwks()
              .map((k) => k.kid)
              .sort(),
            [kid, before.kid].sort(),
          );
          const issuer = accessTokenIssuer(keys, { issuer: 'http://cli.test', now: () => new Date() });
          assert.equal((await issuer.verify(before.token))?.sub, userId);
        });
      });
    });
  });

  describe('what stops before the database', () => {
    it('config check prints the resolved settings with secrets masked, and refuses an invalid one in one line', async () => {
      const secrets = {
        AI_BASE_URL: 'https://ai.example/v1',
        AI_API_KEY: 'sk-very-secret',
        REDIS_URL: 'redis://:redis-pass@127.0.0.1:6379',
      };
      const run = await cli(['config', 'check'], { ...env, ...secrets });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^PORT\s+3000$/m);
      assert.match(run.stdout, /^AI_API_KEY\s+\(set, masked\)$/m);
      assert.match(run.stdout, /^SECRETS_KEY\s+\(set, masked\)$/m);
      for (const secret of ['sk-very-secret', 'redis-pass', TEST_SECRETS_KEY])
        assert.ok(!run.stdout.includes(secret), `${secret} was printed`);
      const invalid = await cli(['config', 'check'], { ...env, PORT: 'abc' });
      assert.equal(invalid.code, 1);
      assert.equal(invalid.stderr, 'error: PORT must be an integer from 0 to 65535, got "abc"\n');
      // A TRUST_PROXY that npm start refuses is refused here too, in the line start prints.
      const startSays = (() => {
        try {
          loadConfig({ TRUST_PROXY: 'yes' });
          return 'accepted';
        } catch (error) {
          return describeStartupError(error, {});
        }
      })();
      assert.match(startSays, /^TRUST_PROXY must be/);
      const proxy = await cli(['config', 'check'], { ...env, TRUST_PROXY: 'yes' });
      assert.equal(proxy.code, 1);
      assert.equal(proxy.stderr, `error: ${startSays}\n`);
    });

    it('rejects a bad command line with exit code 2 and one error line, before touching the database', async () => {
      const cases: [string[], RegExp][] = [
        [['keys', 'create'], /^error: keys create: --name NAME is required/],
        [
          ['keys', 'create', '--name', 'x', '--per-minute', '0'],
          /^error: keys create: --per-minute must be a whole number from 1 to \d+, got "0"$/,
        ],
        [
          ['keys', 'create', '--name', 'x', '--per-minute', 'abc'],
          /^error: keys create: --per-minute must be a whole number from 1 to \d+, got "abc"$/,
        ],
        [
          ['keys', 'create', '--name', 'x', '--per-minute', '50', '--per-day', '10'],
          /^error: keys create: --per-day \(10\) must be at least --per-minute \(50\)$/,
        ],
        [['frobnicate'], /^error: unknown command "frobnicate"$/],
        [['keys', 'create', '--name', 'x', '--colour', 'red'], /^error: keys create: Unknown option '--colour'/],
        [['holidays', 'enable', 'xx'], /^error: holidays enable: unsupported country "xx"/],
        [
          ['clients', 'create', '--name', 'x', '--redirect-uri', 'https://app.example/cb#done'],
          /^error: clients create: --redirect-uri must not contain a fragment/,
        ],
        [
          ['clients', 'create', '--name', 'x', '--redirect-uri', 'http://app.example/cb'],
          /^error: clients create: --redirect-uri must use https unless its host is loopback/,
        ],
        [
          ['users', 'plan', 'kim@example.com', '--plan', 'gold'],
          /^error: users plan: --plan must be one of free, plus, contract$/,
        ],
        [['users', 'warn', 'kim@example.com', '--reason', '   '], /^error: users warn: --reason is required/],
        [
          ['payments', 'record', 'kim@example.com', '--plan', 'plus', '--currency', 'USD'],
          /^error: payments record: --amount is required/,
        ],
        [
          ['payments', 'record', 'kim@example.com', '--plan', 'free', '--amount', '1', '--currency', 'USD'],
          /^error: payments record: --plan must be one of plus, contract$/,
        ],
        [['db', 'move-to-postgres'], /^error: db move-to-postgres: --to is required/],
        [
          ['db', 'move-to-postgres', '--to', 'mysql://db.example/app'],
          /^error: db move-to-postgres: --to must be a postgres:\/\/ URL/,
        ],
      ];
      const runs = await Promise.all(cases.map(([args]) => cli(args, env)));
      runs.forEach((run, i) => {
        const [args, message] = cases[i]!;
        const lines = run.stderr.trimEnd().split('\n');
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
        assert.match(lines[0] ?? '', message);
        assert.deepEqual(lines.slice(1), ['run "npm run cli -- --help" for usage']);
        assert.equal(run.stdout, '');
      });
      const written = await inspect(async (db) => ({
        // Partner keys: the personal key of the plan tests is none of these commands' doing.
        keys: Number(
          (
            await db
              .selectFrom('api_keys')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('user_id', 'is', null)
              .executeTakeFirstOrThrow()
          ).n,
        ),
        xx: await db
          .selectFrom('holiday_countries')
          .select('country_code')
          .where('country_code', '=', 'XX')
          .executeTakeFirst(),
      }));
      assert.deepEqual(written, { keys: 1, xx: undefined });
    });

    it('exits 1 with a clear message, no credentials and no stack trace when the database is unreachable', async () => {
      const run = await cli(['keys', 'list'], { ...env, DATABASE_URL: 'postgres://nobody:s3cret@127.0.0.1:1/x' });
      assert.equal(run.code, 1);
      assert.match(run.stderr, /^error: cannot reach PostgreSQL at 127\.0\.0\.1:1\/x: .*ECONNREFUSED/m);
      assert.ok(!run.stderr.includes('s3cret'), 'the password was printed');
      assert.doesNotMatch(run.stderr, /^\s+at /m);
      assert.equal(run.stdout, '');
    });

    it('--help lists every command and the environment variables', async () => {
      const run = await cli(['--help'], env);
      assert.equal(run.code, 0, run.stderr);
      for (const text of [
        'migrate',
        'seed [--demo] [--seed N]',
        'keys create --name NAME',
        'keys list',
        'keys revoke PREFIX',
        'holidays enable CC',
        'users create',
        'users plan',
        'users warn',
        'users reset-password',
        'payments record',
        'clients create',
        'clients webhook set',
        'clients webhook rotate',
        'institutions create',
        'institutions list',
        'institutions revoke',
        'keys rotate-signing',
        'demo credentials',
        'config check',
        'db move-to-postgres --to',
        'DATABASE_URL',
        'DATA_DIR',
        'SECRETS_KEY',
      ]) {
        assert.ok(run.stdout.includes(text), `usage lacks ${text}`);
      }
      // The defaults it names are those the commands use.
      assert.ok(run.stdout.includes(`(seed N, default ${DEMO_SEED})`), 'usage lacks the demo seed');
      const { per_minute, per_day } = DEFAULT_KEY_LIMITS;
      assert.ok(
        run.stdout.includes(`(default limits ${per_minute} per minute, ${per_day} per day)`),
        'usage lacks limits',
      );
    });

    it('is what npm run cli runs', async () => {
      const { scripts } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      };
      assert.equal(scripts.cli, `node ${CLI.join(' ')}`);
    });
  });
});

/** Makes process.env `to`; returns what it was. */
function replaceEnvironment(to: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const was = { ...process.env };
  for (const name of Object.keys(process.env)) if (!(name in to)) delete process.env[name];
  Object.assign(process.env, to);
  return was;
}
