// Where a webhook may be sent. A registered URL must be https and every address its host resolves to must be
// public (ipaddr.js's `unicast` range: not loopback, private, link-local, carrier-grade NAT, unique-local,
// multicast, reserved…), so an endpoint cannot point the service at its own network. The check runs twice: at
// registration (assertDeliverableUrl) and on the address each delivery actually connects to (checkedLookup, the
// HTTP agent's DNS lookup), so a name that resolved to a public address at registration and to 127.0.0.1 later
// (DNS rebinding) is refused at the moment it matters. An IPv6 address that carries an IPv4 address is judged by
// the IPv4 host it reaches, or refused outright for the deprecated forms and tunnels (isPublicAddress).
// WEBHOOK_ALLOW_PRIVATE_TARGETS=1 lifts both rules (plain http and private addresses), for development and tests only.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { UndeliverableCode } from '../../domain/errors.ts';
import { withTimeout } from '../../server/process/timeout.ts';

/** How long registration waits for DNS before refusing the URL as unresolvable. */
export const DNS_TIMEOUT_MS = 3_000;

/** A URL webhooks cannot be sent to; `code` is stable (the endpoints API returns it in a 400 problem). */
export class UndeliverableUrlError extends Error {
  constructor(
    readonly code: UndeliverableCode,
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

/**
 * IPv6 forms that carry an IPv4 address in their last 32 bits and reach the host it names (IPv4-mapped, the
 * RFC 6145 translated form, the NAT64 well-known prefix 64:ff9b::/96 a DNS64 resolver answers with): public exactly
 * when that IPv4 address is.
 */
const CARRIES_IPV4_IN_LAST_32_BITS = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052']);
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
/** IPv4-compatible ::a.b.c.d (deprecated by RFC 4291): ipaddr.js calls it unicast, yet it carries an IPv4 address. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // ipaddr.js reads the dotted tail of `::a.b.c.d` as IPv4-mapped (::ffff:a.b.c.d); the URL parser, like the socket,
  // reads it as the IPv4-compatible ::a.b.c.d, so the address is judged in the URL parser's canonical form.
  const parsed = ipaddr.parse(isIP(address) === 6 ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const ipv6 = parsed as ipaddr.IPv6;
  // The tunnels that embed an IPv4 address elsewhere (6to4 2002::/16, Teredo 2001::/32), the IPv4-compatible form
  // and the local-use NAT64 prefix (64:ff9b:1::/48, where the operator chooses the IPv4 address's place) are
  // refused whatever they carry: a receiver has a native address, and each can lead to an address of our network.
  if (ipv6.match(IPV4_COMPATIBLE)) return false;
  const range = ipv6.range();
  if (CARRIES_IPV4_IN_LAST_32_BITS.has(range)) {
    if (range === 'rfc6052' && !ipv6.match(NAT64_WELL_KNOWN)) return false;
    const bytes = ipv6.toByteArray().slice(12);
    return new ipaddr.IPv4(bytes).range() === 'unicast';
  }
  return range === 'unicast';
}

/**
 * What a developer whose receiver runs on their own machine needs to read in the refusal: the switch that lifts the
 * rule, and that a running server reads it only when it starts.
 */
const LOCAL_RECEIVERS =
  ' (for a receiver on a development machine, the operator can set WEBHOOK_ALLOW_PRIVATE_TARGETS=1 and restart the' +
  ' server; never in production)';

/** The URL, parsed, when webhooks may be sent to it now; an UndeliverableUrlError otherwise. */
export async function assertDeliverableUrl(raw: string, options: TargetOptions): Promise<URL> {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname)
    throw new UndeliverableUrlError('webhook_url_invalid', 'the URL is not an absolute http(s) URL');
  if (url.username || url.password)
    throw new UndeliverableUrlError('webhook_url_invalid', 'the URL must not carry credentials');
  if (url.protocol !== 'https:' && !options.allowPrivate) {
    throw new UndeliverableUrlError('webhook_url_not_https', `webhook URLs must use https${LOCAL_RECEIVERS}`);
  }
  if (options.allowPrivate) return url;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = isIP(host)
      ? [host]
      : (await withTimeout(resolveAll(host), options.dnsTimeoutMs ?? DNS_TIMEOUT_MS, `DNS for ${host}`)).map(
          (a) => a.address,
        );
  } catch {
    throw new UndeliverableUrlError('webhook_url_unresolvable', `the host ${host} does not resolve`);
  }
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused) {
    const reason = `the host ${host} resolves to ${refused}, which is not a public address${LOCAL_RECEIVERS}`;
    throw new UndeliverableUrlError('webhook_url_not_public', reason);
  }
  return url;
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );
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
        const refusal: NodeJS.ErrnoException = new UndeliverableUrlError(
          'webhook_url_not_public',
          `${hostname} resolved to ${refused.address}, which is not a public address`,
        );
        return callback(refusal, '');
      }
      if (lookupOptions.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
