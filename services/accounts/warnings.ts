// Warning a student: the warning is stored (the profile shows it) and `user.warned` is emitted, in one transaction.
import { studentTransaction } from '../../db/student-transaction.ts';
import type { Db } from '../../db/connect.ts';
import { insertWarning } from '../../db/queries/warnings.ts';
import type { components } from '../../generated/general/types.ts';
import { emitEvent } from '../events/emit.ts';

export type Warning = components['schemas']['Warning'];

export async function warnStudent(db: Db, userId: string, reason: string, now: Date): Promise<Warning> {
  return studentTransaction(db, userId, async (trx) => {
    const row = await insertWarning(trx, { user_id: userId, reason, created_at: now });
    const warning = warningBody(row);
    await emitEvent(trx, { type: 'user.warned', studentId: userId, data: { object: warning }, at: now });
    return warning;
  });
}

export function warningBody(row: { id: string; reason: string; created_at: Date }): Warning {
  return { ...row, created_at: row.created_at.toISOString() };
}
