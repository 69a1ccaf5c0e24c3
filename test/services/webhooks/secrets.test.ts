// Webhook secrets: the Standard Webhooks form, sealed per endpoint, the previous one signing only until it expires;
// the key that seals them (SECRETS_KEY, or a file made once in DATA_DIR); and the process roles of main.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { parseRole } from '../../../app/process/role.ts';
import { secretBox } from '../../../server/auth/secret-box.ts';
import { SECRETS_KEY_FILE, secretsKeyFor } from '../../../app/secrets-key.ts';
import {
  createWebhookSecret,
  openEndpointSecret,
  sealEndpointSecret,
  signingSecrets,
} from '../../../services/webhooks/secrets.ts';

describe('webhook secrets', () => {
  const box = secretBox(randomBytes(32));

  it('makes whsec_ secrets the standardwebhooks library signs with', () => {
    const secret = createWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(createWebhookSecret(), secret);
    const signature = new Webhook(secret).sign('msg_1', new Date(), '{}');
    assert.match(signature, /^v1,/);
  });

  it('seals a secret for one endpoint: it does not open for another', () => {
    const secret = createWebhookSecret();
    const sealed = sealEndpointSecret(box, 'endpoint-a', secret);
    assert.ok(!sealed.includes(secret.slice(6)));
    assert.equal(openEndpointSecret(box, 'endpoint-a', sealed), secret);
    assert.throws(() => openEndpointSecret(box, 'endpoint-b', sealed));
  });

  it('signs with the previous secret only until it expires', () => {
    const [current, previous] = [createWebhookSecret(), createWebhookSecret()];
    const now = new Date('2026-11-23T12:00:00Z');
    const endpoint = (expires: Date | null) => ({
      id: 'e1',
      secret_sealed: sealEndpointSecret(box, 'e1', current),
      previous_secret_sealed: expires ? sealEndpointSecret(box, 'e1', previous) : null,
      previous_secret_expires_at: expires,
    });
    assert.deepEqual(signingSecrets(box, endpoint(new Date('2026-11-24T12:00:00Z')), now), [current, previous]);
    assert.deepEqual(signingSecrets(box, endpoint(new Date('2026-11-23T11:59:59Z')), now), [current]);
    assert.deepEqual(signingSecrets(box, endpoint(null), now), [current]);
  });

  it('takes SECRETS_KEY, or makes a key file in DATA_DIR once, and requires SECRETS_KEY on PostgreSQL', () => {
    const key = randomBytes(32);
    assert.equal(secretsKeyFor({ database: { databaseUrl: 'postgres://x' }, secretsKey: key }), key);
    assert.throws(
      () => secretsKeyFor({ database: { databaseUrl: 'postgres://x' }, secretsKey: undefined }),
      // The key to set after a move is the one it printed: a new one would leave the moved secrets unreadable.
      /required with DATABASE_URL: .*\(after db move-to-postgres, the one it printed\); only for a database no server/,
    );
    const dataDir = mkdtempSync(join(tmpdir(), 'secrets-key-'));
    try {
      const first = secretsKeyFor({ database: { dataDir }, secretsKey: undefined });
      assert.equal(first.length, 32);
      assert.equal(statSync(join(dataDir, SECRETS_KEY_FILE)).mode & 0o777, 0o600);
      assert.deepEqual(secretsKeyFor({ database: { dataDir }, secretsKey: undefined }), first);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('reads the process role from --role (default: both)', () => {
    assert.equal(parseRole([]), 'all');
    assert.equal(parseRole(['--role', 'worker']), 'worker');
    assert.equal(parseRole(['--role=web']), 'web');
    assert.throws(() => parseRole(['--role', 'cook']), /--role must be one of all, web, worker/);
    assert.throws(() => parseRole(['--role']), /--role must be one of/);
  });
});
