// Where a webhook may be sent. A registered URL must be https and every address its host resolves to must be
// public (ipaddr.js's `unicast` range: not loopback, private, link-local, carrier-grade NAT, unique-local,
// multicast, reserved…), so an endpoint cannot point the service at its own network. The check runs twice: at
// registration (assertDeliverableUrl) and on the address each delivery actually connects to (checkedLookup, the
// HTTP agent's DNS lookup), so a name that resolved to a public address at registration and to 127.0.0.1 later
// (DNS rebinding) is refused at the moment it matters. WEBHOOK_ALLOW_PRIVATE_TARGETS=1 lifts both rules (plain http
// and private addresses), for development and tests only.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { withTimeout } from '../timeout.ts';

/** How long registration waits for DNS before refusing the URL as unresolvable. */
export const DNS_TIMEOUT_MS = 3_000;

export type UndeliverableReason = 'webhook_url_invalid' | 'webhook_url_not_https' | 'webhook_url_not_public' | 'webhook_url_unresolvable';

/** A URL webhooks cannot be sent to; `code` is stable (the endpoints API returns it in a 400 problem). */
export class UndeliverableUrlError extends Error {
  constructor(
    readonly code: UndeliverableReason,
    message: string,
  ) {
    super(message);
  }
}

export interface TargetOptions {
  /** The operator's WEBHOOK_ALLOW_PRIVATE_TARGETS: private and loopback addresses, and plain http, allowed. */
  allowPrivate: boolean;
  dnsTimeoutMs?: number;
}

export function isPublicAddress(address: string): boolean {
  // process() turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it carries.
  return ipaddr.isValid(address) && ipaddr.process(address).range() === 'unicast';
}

/** The URL, parsed, when webhooks may be sent to it now; an UndeliverableUrlError otherwise. */
export async function assertDeliverableUrl(raw: string, options: TargetOptions): Promise<URL> {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) throw new UndeliverableUrlError('webhook_url_invalid', 'the URL is not an absolute http(s) URL');
  if (url.username || url.password) throw new UndeliverableUrlError('webhook_url_invalid', 'the URL must not carry credentials');
  if (url.protocol !== 'https:' && !options.allowPrivate) throw new UndeliverableUrlError('webhook_url_not_https', 'webhook URLs must use https');
  if (options.allowPrivate) return url;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await withTimeout(resolveAll(host), options.dnsTimeoutMs ?? DNS_TIMEOUT_MS, `DNS for ${host}`)).map((a) => a.address);
  } catch {
    throw new UndeliverableUrlError('webhook_url_unresolvable', `the host ${host} does not resolve`);
  }
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused) throw new UndeliverableUrlError('webhook_url_not_public', `the host ${host} resolves to ${refused}, which is not a public address`);
  return url;
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => dnsLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.Agent/https.Agent: resolves like dns.lookup, then refuses (ECONNREFUSED-like error with code
 * `webhook_url_not_public`) when any resolved address is not public. The socket connects only to what it returns,
 * so the checked address is the connected one.
 */
export function checkedLookup(options: Pick<TargetOptions, 'allowPrivate'>) {
  return (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const refused = options.allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (refused) {
        const refusal: NodeJS.ErrnoException = new UndeliverableUrlError('webhook_url_not_public', `${hostname} resolved to ${refused.address}, which is not a public address`);
        return callback(refusal, '');
      }
      if (lookupOptions.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
