// Accounts an attacker opens through the open sign-up (POST /api/accounts), as a person would, from as many client
// addresses as the sign-up quota per address makes it need: each loopback address (127.0.0.x, all of them this
// machine's) is one address of the attacker, used until the quota answers 429, then the next. Each account then gets
// a personal key of every scope (neighbourhood.ts personalKeyOf), the key its owner mints for a script.
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { FaultDatabase } from '../../faults/support/fixture.ts';
import { personalKeyOf, type AttackerAccount } from './neighbourhood.ts';

export interface Crowd {
  accounts: AttackerAccount[];
  /** The client addresses the sign-ups came from, in order. */
  addresses: string[];
  /** Sign-ups refused by the quota (429) before the next address was taken. */
  refused: number;
}

/** Signs up `count` accounts at `base`, from 127.0.0.1, then 127.0.0.2, …, whenever the address's quota is spent. */
export async function signUpCrowd(base: string, database: FaultDatabase, count: number): Promise<Crowd> {
  const accounts: AttackerAccount[] = [];
  const addresses = ['127.0.0.1'];
  let refused = 0;
  while (accounts.length < count) {
    const nickname = `crowd_${randomBytes(4).toString('hex')}`;
    const password = `pw-${randomBytes(12).toString('base64url')}`;
    const account = { email: `${nickname}@example.com`, password, nickname, first_name: 'Mallory' };
    const answer = await postFrom(addresses.at(-1)!, `${base}/api/accounts`, account);
    if (answer.status === 429) {
      refused++;
      if (addresses.length >= 250) throw new Error('the sign-up quota refused every loopback address');
      addresses.push(`127.0.0.${addresses.length + 1}`);
      continue;
    }
    if (answer.status !== 201) throw new Error(`sign-up answered ${answer.status}: ${answer.text}`);
    const { id } = JSON.parse(answer.text) as { id: string };
    accounts.push({ id, email: account.email, password: account.password, key: await personalKeyOf(database, id) });
  }
  return { accounts, addresses, refused };
}

/** A JSON POST sent from the local address `from` (fetch cannot choose its source address). */
function postFrom(from: string, url: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    const req = request(url, { method: 'POST', localAddress: from, family: 4, agent: false, timeout: 10_000, headers });
    req.on('timeout', () => req.destroy(new Error(`sign-up from ${from} got no answer within 10 s`)));
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.end(payload);
  });
}
