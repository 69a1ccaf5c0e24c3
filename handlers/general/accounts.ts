import { EXPORT_SECTIONS, exportPages, exportUser, inExportSnapshot } from '../../db/queries/export.ts';
import { revokeRefreshTokensOfOtherGrants } from '../../db/queries/oauth.ts';
import { deleteAccount, setPasswordHash } from '../../db/queries/users.ts';
import { AccountTaken, createAccount as insertNewAccount } from '../../server/auth/accounts.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import { passwordConfirmed, signedInFreshly } from '../../server/auth/reauthentication.ts';
import { DownloadStopped, downloadWriter } from '../../server/http/download.ts';
import { problems } from '../../server/problems.ts';
import { profileBody } from './profile-body.ts';
import { assertTimeZone } from './time-zones.ts';
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
    if (error instanceof AccountTaken) throw problems.conflict(`${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`);
    throw error;
  }
};

/**
 * A new password, given the current one. The other sign-ins' refresh tokens end (those devices sign in again); their
 * grants, the keys minted through them and the caller's own sign-in are kept.
 */
export const changeMyPassword: GeneralHandlers['changeMyPassword'] = async ({ body, principal }, { db, now, passwordAttempts }) => {
  if (!passwordAttempts) throw new Error('the general surface counts password attempts (server/auth/password-attempts.ts)');
  // Counted per account before the check, as the sign-in form counts: a stolen key cannot guess the password.
  if (!(await passwordAttempts.attempt(principal.user_id, () => passwordConfirmed(db, principal.user_id, body.current_password)))) {
    throw problems.reauthenticationRequired("The password does not match; send the account's current password.");
  }
  const passwordHash = await hashPassword(body.new_password);
  const keptGrant = principal.credential.kind === 'access_token' ? principal.credential.grant_id : null;
  await db.transaction().execute(async (trx) => {
    await setPasswordHash(trx, principal.user_id, passwordHash, now());
    await revokeRefreshTokensOfOtherGrants(trx, principal.user_id, keptGrant, now());
  });
  return { status: 204, body: undefined };
};

/**
 * Erases the account by the retention policy in the spec (deleteMyAccount), for a fresh sign-in only: the student
 * typed the password at most 5 minutes ago.
 */
export const deleteMyAccount: GeneralHandlers['deleteMyAccount'] = async ({ principal }, { db, now }) => {
  if (!(await signedInFreshly(db, principal.credential, now()))) {
    throw problems.reauthenticationRequired('Sign in again: only a sign-in at most 5 minutes old can delete the account.');
  }
  if (!(await deleteAccount(db, principal.user_id))) throw problems.notFound('This account no longer exists.');
  return { status: 204, body: undefined };
};

/** The layout version of the export document (AccountExport.format_version). */
const EXPORT_FORMAT_VERSION = '1';
/** A client that reads nothing for this long loses its export: on PostgreSQL it holds a connection and a snapshot. */
const EXPORT_STALL_MS = 60_000;

/**
 * The account export (AccountExport in the spec), streamed: the profile is read before the first byte, so a database
 * that is down is still a 503 problem; then each section is read page by page and written as it is read. Once the 200
 * has started, any failure ends the connection without the transfer's last chunk, and is logged.
 */
export const exportMyAccount: GeneralHandlers['exportMyAccount'] = async ({ principal }, { db, now, lifecycle }, { req, res }) => {
  const exportedAt = now();
  try {
    await inExportSnapshot(db, async (reader) => {
      const user = await exportUser(reader, principal.user_id);
      if (!user) throw problems.notFound('This account no longer exists.');
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="study-companion-export-${exportedAt.toISOString().slice(0, 10)}.json"`);
      res.setHeader('Cache-Control', 'no-store');
      if (req.method === 'HEAD') return void res.end();
      const out = downloadWriter(res, { stallMs: EXPORT_STALL_MS, stop: lifecycle.streamsEnd });
      await out.write(`{"format_version":"${EXPORT_FORMAT_VERSION}","exported_at":${JSON.stringify(exportedAt)},"user":${JSON.stringify(user)}`);
      for (const section of EXPORT_SECTIONS) {
        await out.write(`,"${section.name}":[`);
        let separator = '';
        for await (const rows of exportPages(section, reader, principal.user_id)) {
          await out.write(separator + rows.map((row) => JSON.stringify(row)).join(','));
          separator = ',';
        }
        await out.write(']');
      }
      await out.write('}');
      out.end();
    });
  } catch (error) {
    if (!res.headersSent) throw error; // a problem (503, 500, 404) while nothing is sent yet
    if (error instanceof DownloadStopped) req.log.info({ reason: error.reason }, 'the account export stopped before its end');
    else req.log.error({ err: error }, 'the account export failed after it started; the connection is closed so the client sees it truncated');
    res.destroy();
  }
};
