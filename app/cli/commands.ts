// The operator's commands, by name, and the dispatcher that runs one command line: here (scripts/cli.ts) or inside
// the running embedded server (app/cli/server-socket.ts). Exit codes: 0 done, 1 failed while running, 2 wrong
// command line.
import { inspect } from 'node:util';
import { errorMessage } from '../../db/errors.ts';
import { DEFAULT_KEY_LIMITS } from '../../db/queries/api-key-defaults.ts';
import { DEMO_SEED } from '../../db/seed/demo-seed.ts';
import { note, print, UsageError } from './shared.ts';

type Command = (args: string[]) => Promise<void>;

/** A command whose module is loaded when it runs: a command loads only what it needs, and --help almost nothing. */
function lazy<M>(load: () => Promise<M>, pick: (module: M) => Command): Command {
  return async (args) => pick(await load())(args);
}
const accounts = () => import('./accounts.ts');
const clientWebhooks = () => import('./client-webhooks.ts');
const data = () => import('./data.ts');
const institutions = () => import('./institutions.ts');
const keys = () => import('./keys.ts');
const plans = () => import('./plans.ts');

// A Map rather than an object literal, so that "constructor" or "toString" is no command.
const commands = new Map<string, Command>([
  ['migrate', lazy(data, (m) => m.migrate)],
  ['seed', lazy(data, (m) => m.seed)],
  [
    'db move-to-postgres',
    lazy(
      () => import('./move-to-postgres.ts'),
      (m) => m.moveToPostgres,
    ),
  ],
  ['keys create', lazy(keys, (m) => m.create)],
  ['keys list', lazy(keys, (m) => m.list)],
  ['keys revoke', lazy(keys, (m) => m.revoke)],
  [
    'keys rotate-signing',
    lazy(
      () => import('./signing-keys.ts'),
      (m) => m.rotateSigning,
    ),
  ],
  [
    'holidays enable',
    lazy(
      () => import('./holidays.ts'),
      (m) => m.enable,
    ),
  ],
  ['users create', lazy(accounts, (m) => m.createUser)],
  ['users plan', lazy(plans, (m) => m.changePlan)],
  ['users warn', lazy(plans, (m) => m.warnUser)],
  ['users reset-password', lazy(accounts, (m) => m.resetPassword)],
  ['users key', lazy(accounts, (m) => m.createPersonalKey)],
  [
    'payments record',
    lazy(
      () => import('./payments.ts'),
      (m) => m.recordManualPayment,
    ),
  ],
  ['clients create', lazy(accounts, (m) => m.createClient)],
  ['clients webhook set', lazy(clientWebhooks, (m) => m.setClientWebhook)],
  ['clients webhook show', lazy(clientWebhooks, (m) => m.showClientWebhook)],
  ['clients webhook rotate', lazy(clientWebhooks, (m) => m.rotateClientWebhook)],
  ['clients webhook remove', lazy(clientWebhooks, (m) => m.removeClientWebhook)],
  ['institutions create', lazy(institutions, (m) => m.createInstitution)],
  ['institutions list', lazy(institutions, (m) => m.listAllInstitutions)],
  ['institutions revoke', lazy(institutions, (m) => m.revokeInstitution)],
  [
    'demo credentials',
    lazy(
      () => import('./demo.ts'),
      (m) => m.credentials,
    ),
  ],
  [
    'config check',
    lazy(
      () => import('./config.ts'),
      (m) => m.check,
    ),
  ],
]);

/** The help text; the two defaults it names are read from their modules, which import nothing. */
function usage(): string {
  return `Usage: npm run cli -- <command> [options]

Commands:
  migrate                     apply pending database migrations
  seed [--demo] [--seed N]    load reference data (universities, KZ/RU holidays); --demo also adds demo
       [--scale N]            users and their activity when there are no users yet (seed N, default ${DEMO_SEED});
                              --scale adds N generated students with tasks, decks and reviews (a progress bar;
                              ~1,000,000 in under 3 minutes on PostgreSQL), e.g. for npm run bench
  db move-to-postgres --to postgres://user:password@host:port/database
                              copy the embedded database of DATA_DIR, all of it, into an empty PostgreSQL
                              database, in one transaction (the server must be stopped); its signing keys move
                              into the database. When SECRETS_KEY is not set, the key of DATA_DIR's secrets.key
                              is the last line of stdout: set it as SECRETS_KEY on PostgreSQL
  keys create --name NAME [--per-minute N] [--per-day N]
                              issue a partner API key (default limits ${DEFAULT_KEY_LIMITS.per_minute} per minute, ${DEFAULT_KEY_LIMITS.per_day} per day);
                              the key is shown once, as the last line of stdout
  keys list                   list API keys by prefix (never the keys themselves)
  keys revoke PREFIX          revoke the active key with this prefix (svc_live_XXXXXXXX)
  keys rotate-signing         a new key signs OAuth access tokens; the previous one verifies until its tokens
                              expire (stored in DATA_DIR, or in the database encrypted with SECRETS_KEY)
  holidays enable CC [--years YYYY|YYYY-YYYY]
                              store the public holidays of country CC (default years: last year to two ahead)
  users create --email ADDRESS --nickname NAME [--first-name NAME] [--time-zone ZONE] [--country CC]
                              create a student account; its generated password is the last line of stdout
  users plan EMAIL --plan free|plus|contract [--per-minute N --per-day N --ai-per-hour N]
                              change the account's plan; the next request counts under its limits. A contract's
                              limits are agreed: give all three, or those that change on an existing contract
  users warn EMAIL --reason TEXT
                              warn the student: shown on their profile, sent as user.warned; prints its id
  users reset-password EMAIL  give the account a generated password, the last line of stdout (shown once); every
                              sign-in's refresh tokens end; grants and personal keys are kept
  users key EMAIL [--name NAME] [--scopes "a b"]
                              make a personal API key of the student (default: every scope but keys:manage); the
                              key is the last line of stdout, shown once
  payments record EMAIL --plan plus|contract --amount N --currency CCC [--provider-event-id ID]
                              record a payment taken outside the provider (amount in minor units): the plan
                              changes at once, payment.succeeded is sent; the same ID again records nothing
                              (default: a new manual-<uuid>); prints the payment's id
  clients create --name NAME --redirect-uri URL [--redirect-uri URL ...] [--scopes "a b"]
                 [--confidential [--owner EMAIL]]
                              register an OAuth client (public: PKCE, no secret; --confidential: a secret;
                              --owner: client credentials acting for that account); id, then secret, on stdout
  clients webhook set CLIENT_ID --url URL [--events "task.created exam.updated …"] [--description TEXT]
                              the app's one webhook endpoint (default: every kind); it gets the events of each
                              student whose grant holds the kind's read scope; a new endpoint's signing secret
                              is the last line of stdout, shown once
  clients webhook show CLIENT_ID
                              the app's endpoint: URL, kinds, status (never the secret)
  clients webhook rotate CLIENT_ID
                              a new signing secret, the last line of stdout; the previous one signs 24 h more
  clients webhook remove CLIENT_ID
                              remove the app's endpoint
  institutions create --name NAME --redirect-uri URL [--redirect-uri URL ...] [--scopes "a b"]
                              register an institution: a confidential client that exchanges its credential for a
                              10-minute token of one student who consented to it (RFC 8693 token exchange);
                              client_id, then client_secret (shown once), on stdout
  institutions list           institutions with their number of consenting students and status (never secrets)
  institutions revoke CLIENT_ID
                              end an institution for good: its credential is refused, every student's grant to
                              it is revoked and its tokens stop at once
  demo credentials            new demo credentials of an embedded database (those npm start printed on its first
                              start): the demo partner key, the demo student's password and personal key; the
                              previous demo keys are revoked, the student's sign-ins end. Shown once, on stdout
  config check                validate the environment npm start reads; print the resolved settings, secrets
                              masked (opens no database)
  help                        show this text

Every command except help and config check migrates the database first. While npm start runs on the embedded
database, a command runs in that server, on its database (it says so on stderr; a server silent for a minute is
given up on, exit 1); seed --scale and db move-to-postgres need it stopped.

Environment:
  DATABASE_URL   PostgreSQL to use, postgres://user:password@host:port/database
  DATA_DIR       without DATABASE_URL: the embedded PGlite database's directory (default .data/);
                 only one process may open it at a time: while the server runs, commands run through it
  SECRETS_KEY    with DATABASE_URL: the key that encrypts the stored signing keys (keys rotate-signing) and
                 webhook secrets (clients webhook); without DATABASE_URL, a key file in DATA_DIR
  WEBHOOK_ALLOW_PRIVATE_TARGETS=1
                 clients webhook set: allow http and private or loopback addresses (development only)
  DEBUG=1        print the stack trace of an error

Exit codes: 0 success, 1 failure while running (e.g. database unreachable), 2 invalid command line.`;
}

/** The command named by the first one, two or three words of `argv`. */
function resolve(argv: string[]): string {
  for (const words of [3, 2, 1]) {
    const name = argv.slice(0, words).join(' ');
    if (argv.length >= words && commands.has(name)) return name;
  }
  // The longest start of the command line that some commands share names what is missing or unknown after it.
  const group = [2, 1]
    .map((words) => argv.slice(0, words).join(' '))
    .find((start) => [...commands.keys()].some((name) => name.startsWith(`${start} `)));
  if (group === undefined) throw new UsageError(`unknown command ${JSON.stringify(argv[0] ?? '')}`);
  const subcommands = [...commands.keys()]
    .filter((name) => name.startsWith(`${group} `))
    .map((name) => name.slice(group.length + 1));
  const next = argv[group.split(' ').length];
  throw new UsageError(
    next
      ? `unknown ${group} command ${JSON.stringify(next)}; expected ${subcommands.join(', ')}`
      : `${group} needs a command: ${subcommands.join(', ')}`,
  );
}

/** What a command line needs besides a database: the help, and `config check` (it checks the caller's environment). */
export function opensNoDatabase(argv: string[]): boolean {
  return isHelp(argv) || argv.slice(0, 2).join(' ') === 'config check';
}

/**
 * Commands that the running server does not run: reading ~1,000,000 generated students holds its one database for
 * minutes, and every request with it; a move to PostgreSQL would miss what the server writes after it.
 */
export function refusedInServer(argv: string[]): string | undefined {
  if (argv[0] === 'seed' && argv.some((arg) => arg === '--scale' || arg.startsWith('--scale='))) {
    return 'seed --scale holds the embedded database for minutes, and the running server with it: stop the server (Ctrl-C), then run it again';
  }
  if (argv[0] === 'db' && argv[1] === 'move-to-postgres') {
    return 'db move-to-postgres copies the embedded database as it is at one moment: stop the server (Ctrl-C) so that nothing changes after it, then run it again';
  }
  return undefined;
}

function isHelp(argv: string[]): boolean {
  return argv.length === 0 || ['help', '--help', '-h'].includes(argv[0]!) || argv.includes('--help');
}

/** Runs one command line; resolves to its exit code. `debug` adds an error's stack trace to its message. */
export async function runCommandLine(argv: string[], { debug = false } = {}): Promise<number> {
  let command: string | undefined;
  try {
    if (isHelp(argv)) {
      print(usage());
    } else {
      command = resolve(argv);
      await commands.get(command)!(argv.slice(command.split(' ').length));
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      note(`error: ${command ? `${command}: ` : ''}${error.message}\nrun "npm run cli -- --help" for usage\n`);
      return 2;
    }
    note(`error: ${errorMessage(error)}\n`);
    if (debug) note(`${inspect(error)}\n`);
    return 1;
  }
}
