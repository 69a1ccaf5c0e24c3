import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { secretBox } from '../../server/auth/secret-box.ts';

describe('secretBox (secrets encrypted at rest)', () => {
  const box = secretBox(randomBytes(32));

  it('opens what it sealed, and seals the same text differently each time', () => {
    const sealed = box.seal('{"d":"private"}', 'signing-key:a');
    assert.match(sealed, /^v1\.[\w-]+$/);
    assert.ok(!sealed.includes('private'));
    assert.notEqual(box.seal('{"d":"private"}', 'signing-key:a'), sealed);
    assert.equal(box.open(sealed, 'signing-key:a'), '{"d":"private"}');
  });

  it('refuses another key, another context (a value moved to another row) and an altered value', () => {
    const sealed = box.seal('secret', 'signing-key:a');
    assert.throws(
      () => secretBox(randomBytes(32)).open(sealed, 'signing-key:a'),
      /SECRETS_KEY is not the key it was encrypted with/,
    );
    assert.throws(() => box.open(sealed, 'signing-key:b'), /cannot decrypt/);
    const altered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    assert.throws(() => box.open(altered, 'signing-key:a'), /cannot decrypt/);
  });
});
