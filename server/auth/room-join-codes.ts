// Study room join codes: `rjc_` + 22 base62 characters (about 130 bits), given by a room's owner to whoever may join.
// A code is a credential to the room: only its hash is stored (server/auth/secret-hash.ts), and its public prefix
// (`rjc_` + the first 6 random characters) lets the owner recognise the one in force.
import { randomBase62 } from './api-keys.ts';
import { hashSecret } from './secret-hash.ts';

const CODE_PREFIX = 'rjc_';
/** The spec's RoomJoinCodeValue pattern is this shape. */
const RANDOM_LENGTH = 22;
const PUBLIC_PREFIX_LENGTH = CODE_PREFIX.length + 6;

export function generateJoinCode(): { code: string; prefix: string; hash: string } {
  const code = CODE_PREFIX + randomBase62(RANDOM_LENGTH);
  return { code, prefix: code.slice(0, PUBLIC_PREFIX_LENGTH), hash: hashSecret(code) };
}
