import type { Db } from '../connect.ts';

type CountedTable = 'users' | 'universities' | 'flashcard_decks' | 'ai_messages' | 'study_rooms';

/** All counts of /stats in one round trip. */
export async function getServiceStats(db: Db, activeSince: Date) {
  return db
    .selectNoFrom((eb) => {
      // A scalar subquery is nullable to the type system; a count never is, hence the coalesce.
      const count = (table: CountedTable, activeOnly = false) => {
        const rows = eb.selectFrom(table).select(eb.fn.countAll<number>().as('n'));
        return eb.fn.coalesce(activeOnly ? rows.where('last_active_at', '>=', activeSince) : rows, eb.lit(0));
      };
      return [
        count('users').as('total_users'),
        count('users', true).as('active_users_30d'),
        count('universities').as('universities_count'),
        count('flashcard_decks').as('flashcard_decks'),
        count('ai_messages').as('ai_messages_total'),
        count('study_rooms').as('study_rooms_total'),
      ];
    })
    .executeTakeFirstOrThrow();
}
