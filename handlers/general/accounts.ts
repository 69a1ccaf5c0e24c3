import type { IncomingMessage, ServerResponse } from 'node:http';
import { deleteAccount } from '../../db/queries/users.ts';
import { AccountTaken, createAccount as insertNewAccount } from '../../server/auth/accounts.ts';
import { replacePassword } from '../../services/accounts/replace-password.ts';
import { leaveEveryRoom } from '../../services/rooms/leaving.ts';
import { passwordConfirmed, signedInFreshly } from '../../server/auth/reauthentication.ts';
import { startAccountExport } from '../../services/exports/account-export.ts';
import type { ExportSettings } from '../../services/exports/export-settings.ts';
import { DownloadStopped, downloadWriter } from '../../server/http/download.ts';
import type { Spool } from '../../server/http/spool.ts';
import { problems } from '../../server/http/problems.ts';
import { profileBody } from '../../services/accounts/profile-body.ts';
import { assertTimeZone } from '../../services/accounts/time-zones.ts';
import type { GeneralHandlers } from './types.ts';

export const createAccount: GeneralHandlers['createAccount'] = async ({ body }, { db }) => {
  await assertTimeZone(db, body.time_zone, 'body.time_zone');
  try {
    const row = await insertNewAccount(db, {
      email: body.email,
      password: body.password,
      nickname: body.nickname,
      first_name: body.first_name,
      time_zone: body.time_zone ?? 'UTC',
      country_code: body.country_code ?? null,
    });
    return { status: 201, body: profileBody(row, []) };
  } catch (error) {
    if (error instanceof AccountTaken)
      throw problems.conflict(`${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`);
    throw error;
  }
};

/**
 * A new password, given the current one. Every other sign-in ends with everything it owns (GRANT_ARTIFACTS: its
 * tokens, the keys minted and the webhook endpoints registered through it), apps' and institutions' included: a
 * credential taken before the change keeps nothing. Kept: the credential making the change (its grant, or the
 * student's own key) and the student's own keys and endpoints, made outside any grant.
 */
export const changeMyPassword: GeneralHandlers['changeMyPassword'] = async (
  { body, principal },
  { db, now, passwordAttempts },
) => {
  if (!passwordAttempts)
    throw new Error('the general surface counts password attempts (server/auth/password-attempts.ts)');
  // Counted per account before the check, as the sign-in form counts: a stolen key cannot guess the password.
  if (
    !(await passwordAttempts.attempt(principal.user_id, () =>
      passwordConfirmed(db, principal.user_id, body.current_password),
    ))
  ) {
    throw problems.reauthenticationRequired("The password does not match; send the account's current password.");
  }
  await replacePassword(db, principal.user_id, body.new_password, {
    keptGrantId: principal.credential.grant_id,
    reason: 'password_changed',
    at: now(),
  });
  return { status: 204, body: undefined };
};

/**
 * Erases the account by the retention policy in the spec (deleteMyAccount), for a fresh sign-in only: the student
 * typed the password at most 5 minutes ago.
 */
export const deleteMyAccount: GeneralHandlers['deleteMyAccount'] = async ({ principal }, { db, now }) => {
  if (!(await signedInFreshly(db, principal.credential, now()))) {
    throw problems.reauthenticationRequired(
      'Sign in again: only a sign-in at most 5 minutes old can delete the account.',
    );
  }
  const leaveRooms = (trx: typeof db) => leaveEveryRoom(trx, principal.user_id, now());
  const deleted = await deleteAccount(db, principal.user_id, leaveRooms);
  if (!deleted) throw problems.notFound('This account no longer exists.');
  return { status: 204, body: undefined };
};

/**
 * The account export (AccountExport in the spec), streamed. One per student at a time, a few per process reading the
 * database at once, read into a temporary file at the database's speed (services/exports/account-export.ts); the
 * client is sent the file as it grows. The profile is read before the first byte, so a database that is down is still
 * a 503 problem; once the 200 has started, any failure ends the connection without the transfer's last chunk, and is
 * logged.
 */
export const exportMyAccount: GeneralHandlers['exportMyAccount'] = async (
  { principal },
  { db, now, lifecycle, exports, leases },
  { req, res },
) => {
  const started = await startAccountExport(db, { leases, limits: exports }, principal.user_id, now, req.log);
  try {
    // Everything is freed before the client sees the end, so a next export sent at once finds the account's free.
    await sendExport(started.spool, started.exportedAt, exports.settings, lifecycle.streamsEnd, started.free, req, res);
  } finally {
    await started.free();
  }
};

/**
 * Sends what the spool holds as it grows: a problem if the reading failed before its first byte, else the 200, whose
 * end waits for `beforeEnd`.
 */
async function sendExport(
  spool: Spool,
  exportedAt: Date,
  settings: ExportSettings,
  stop: AbortSignal,
  beforeEnd: () => Promise<void>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  await spool.started(); // a problem (404, 503, 500) while nothing is sent yet
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader(
    'Content-Disposition',
    `attachment; filename="study-companion-export-${exportedAt.toISOString().slice(0, 10)}.json"`,
  );
  res.setHeader('Cache-Control', 'no-store');
  if (req.method === 'HEAD') {
    await beforeEnd();
    return void res.end();
  }
  const out = downloadWriter(res, { stallMs: settings.stallMs, maxDurationMs: settings.maxDurationMs, stop });
  try {
    for await (const chunk of spool.chunks()) await out.write(chunk);
    await beforeEnd();
    out.end();
  } catch (error) {
    if (error instanceof DownloadStopped)
      req.log.info({ reason: error.reason }, 'the account export stopped before its end');
    else
      req.log.error(
        { err: error },
        'the account export failed after it started; the connection is closed so the client sees it truncated',
      );
    res.destroy();
  }
}
