// The settings that decide whether several processes can share tokens: refused at start, in one line, when unsafe;
// and the declaration every variable is read through.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_VARIABLES } from '../../app/config-variables.ts';
import { signingKeySource } from '../../server/auth/signing-key-store.ts';
import { loadConfig } from '../../app/config.ts';
import { ConfigError } from '../../server/process/config-error.ts';

describe('loadConfig: processes, secrets and metrics', () => {
  const postgres = { DATABASE_URL: 'postgres://app@db.example:5432/app' };
  const secretsKey = Buffer.alloc(32, 1).toString('base64');

  it('requires PUBLIC_URL with WEB_CONCURRENCY above 1 on PostgreSQL, not on the embedded database', () => {
    assert.throws(
      () => loadConfig({ ...postgres, WEB_CONCURRENCY: '2' }),
      (e) => e instanceof ConfigError && /^PUBLIC_URL is required with WEB_CONCURRENCY above 1/.test(e.message),
    );
    assert.equal(
      loadConfig({ ...postgres, WEB_CONCURRENCY: '2', PUBLIC_URL: 'https://api.example' }).webConcurrency,
      2,
    );
    assert.equal(loadConfig({ WEB_CONCURRENCY: '2' }).webConcurrency, 2); // main.ts says it runs one process
    assert.throws(
      () => loadConfig({ WEB_CONCURRENCY: '0' }),
      /WEB_CONCURRENCY must be an integer from 1 to 64, got "0"/,
    );
  });

  it('takes SECRETS_KEY as 32 bytes of base64 only, and requires it for keys stored in PostgreSQL', () => {
    assert.equal(loadConfig({ SECRETS_KEY: secretsKey }).secretsKey?.length, 32);
    for (const bad of ['short', Buffer.alloc(16).toString('base64'), 'not base64 at all!!']) {
      assert.throws(() => loadConfig({ SECRETS_KEY: bad }), /SECRETS_KEY must be 32 random bytes in base64/);
    }
    assert.throws(() => signingKeySource(loadConfig(postgres)), /^Error: SECRETS_KEY is required with DATABASE_URL/);
    assert.equal(signingKeySource(loadConfig({ ...postgres, SECRETS_KEY: secretsKey })), 'database');
    assert.equal(signingKeySource(loadConfig({})), 'DATA_DIR');
    assert.equal(signingKeySource(loadConfig({ ...postgres, JWT_PRIVATE_KEY: 'pem' })), 'JWT_PRIVATE_KEY');
  });

  it('times the readiness stream: a heartbeat every 15 s and 15 minutes at most by default, each settable within bounds', () => {
    assert.deepEqual(loadConfig({}).streams, { heartbeatMs: 15_000, maxDurationMs: 900_000 });
    assert.deepEqual(loadConfig({ SSE_HEARTBEAT_MS: '500', SSE_MAX_DURATION_MS: '60000' }).streams, {
      heartbeatMs: 500,
      maxDurationMs: 60_000,
    });
    assert.throws(
      () => loadConfig({ SSE_HEARTBEAT_MS: '10' }),
      /SSE_HEARTBEAT_MS must be an integer from 100 to 600000, got "10"/,
    );
    assert.throws(() => loadConfig({ SSE_MAX_DURATION_MS: 'forever' }), /SSE_MAX_DURATION_MS must be an integer/);
  });

  it('reads 2 account exports from the database at once per process by default, EXPORT_MAX_READING within 1 to 100', () => {
    assert.deepEqual(loadConfig({}).exports, { maxReading: 2 });
    assert.deepEqual(loadConfig({ EXPORT_MAX_READING: '4' }).exports, { maxReading: 4 });
    assert.throws(
      () => loadConfig({ EXPORT_MAX_READING: '0' }),
      /EXPORT_MAX_READING must be an integer from 1 to 100, got "0"/,
    );
  });

  it('bounds how long a request may take to arrive: 30 s by default, settable from 100 ms to 300 s', () => {
    assert.equal(loadConfig({}).requestTimeoutMs, 30_000);
    assert.equal(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).requestTimeoutMs, 5_000);
    assert.throws(
      () => loadConfig({ REQUEST_TIMEOUT_MS: '0' }),
      /REQUEST_TIMEOUT_MS must be an integer from 100 to 300000, got "0"/,
    );
  });

  it('serves metrics only when METRICS_PORT is set, on 127.0.0.1 unless METRICS_HOST says otherwise', () => {
    assert.equal(loadConfig({}).metrics, undefined);
    assert.deepEqual(loadConfig({ METRICS_PORT: '9464' }).metrics, { port: 9464, host: '127.0.0.1' });
    assert.deepEqual(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metrics, {
      port: 9464,
      host: '0.0.0.0',
    });
  });

  it('refuses a TRUST_PROXY that Express cannot compile, and keeps those it can', () => {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: 'yes' }),
      (e) =>
        e instanceof ConfigError &&
        /^TRUST_PROXY must be true, false, a hop count or addresses and subnets .*, got "yes": invalid IP address: yes$/.test(
          e.message,
        ),
    );
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.equal(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy, 'loopback, 10.0.0.0/8');
  });
});

describe('the declared variables', () => {
  it('refuses a flag other than 1 or 0 rather than reading it as off', () => {
    assert.equal(loadConfig({ VALIDATE_RESPONSES: '1' }).validateResponses, true);
    assert.equal(loadConfig({ VALIDATE_RESPONSES: '0' }).validateResponses, false);
    assert.throws(
      () => loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }),
      (e) =>
        e instanceof ConfigError && e.message === 'WEBHOOK_ALLOW_PRIVATE_TARGETS must be 1 (on) or 0 (off), got "true"',
    );
  });

  it("takes LOG_LEVEL as one of pino's levels only", () => {
    assert.equal(loadConfig({ LOG_LEVEL: 'debug' }).logLevel, 'debug');
    assert.throws(
      () => loadConfig({ LOG_LEVEL: 'verbose' }),
      (e) =>
        e instanceof ConfigError &&
        e.message === 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    );
  });

  it("counts an empty variable as unset, as an env file's NAME= leaves it", () => {
    assert.deepEqual(
      loadConfig(Object.fromEntries(Object.keys(CONFIG_VARIABLES).map((name) => [name, '']))),
      loadConfig({}),
    );
  });

  it('declares every variable the service reads (the service reads none but through the declaration)', () => {
    const root = new URL('../../', import.meta.url).pathname;
    const read = ['app', 'server', 'services', 'handlers', 'db', 'domain']
      .flatMap((dir) =>
        readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
          .filter((f) => /\.(ts|mjs)$/.test(f))
          .map((f) => join(root, dir, f)),
      )
      .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!));
    assert.ok(read.length > 0);
    assert.deepEqual(
      [...new Set(read)].filter((name) => !(name in CONFIG_VARIABLES)),
      [],
    );
  });
});
