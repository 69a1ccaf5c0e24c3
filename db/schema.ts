// Kysely's view of the database. Column names are the API's field names (snake_case end to end).
import type { ColumnType, Generated } from 'kysely';
import type { FsrsCardState, FsrsParameters } from '../domain/fsrs.ts';

/** A timestamp column: read as Date, written as Date or ISO string, defaulted by the database. */
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** DATE columns are read as 'YYYY-MM-DD' strings on both drivers (see db/connect.ts). */
type DateOnly = ColumnType<string, string, string>;

export interface UniversitiesTable {
  id: Generated<string>;
  name: string;
  short_name: string;
  city: string;
  country: string;
  student_count: number;
  is_verified: boolean;
  default_academic_system: string;
  default_gpa_scale: string;
  website: string | null;
  founded_year: number | null;
  created_at: CreatedAt;
}

export interface UsersTable {
  id: Generated<string>;
  nickname: string;
  first_name: string;
  avatar_url: string | null;
  bio: Generated<string>;
  xp: Generated<number>;
  streak: Generated<number>;
  university_id: string | null;
  last_active_at: Timestamp | null;
  created_at: CreatedAt;
  email: string | null;
  password_hash: string | null;
  time_zone: Generated<string>;
  country_code: string | null;
  /** The one record of the plan; partner v1's `premium_tier` is computed from it (domain/plans.ts). */
  plan: Generated<'free' | 'plus' | 'contract'>;
  contract_per_minute: number | null;
  contract_per_day: number | null;
  contract_ai_per_hour: number | null;
  updated_at: Generated<Date>;
  /** The last local date with a review or a completed task; null before the first (seeded streaks keep their value). */
  last_study_date: DateOnly | null;
}

export interface ApiKeysTable {
  id: Generated<string>;
  prefix: string;
  key_hash: string;
  name: string;
  /** Partner keys only; a personal key follows its user's plan. */
  per_minute: number | null;
  per_day: number | null;
  created_at: CreatedAt;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  /** Personal keys only: the owner and the scopes chosen at creation. */
  user_id: string | null;
  scopes: string[] | null;
  /** Personal keys minted through an OAuth grant: they end with it. */
  grant_id: string | null;
}

export interface OauthClientsTable {
  id: string;
  name: string;
  secret_hash: string | null;
  redirect_uris: string[];
  grants: string[];
  scopes: string[];
  owner_user_id: string | null;
  created_at: CreatedAt;
  /** 'institution': may exchange its credential for one consenting student's token (RFC 8693). */
  kind: Generated<'app' | 'institution'>;
  /** Set by `institutions revoke`: the client is unknown to the authorization server from then on. */
  disabled_at: Timestamp | null;
}

export interface OauthGrantsTable {
  id: Generated<string>;
  client_id: string;
  user_id: string;
  scopes: string[];
  created_at: CreatedAt;
  revoked_at: Timestamp | null;
  revoked_reason: string | null;
  /** When the student typed the password for this grant (sign-in and consent); null for client credentials. */
  authenticated_at: Timestamp | null;
}

export interface OauthAuthorizationCodesTable {
  code_hash: string;
  grant_id: string;
  redirect_uri: string;
  code_challenge: string;
  code_challenge_method: string;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface OauthRefreshTokensTable {
  token_hash: string;
  grant_id: string;
  expires_at: Timestamp;
  created_at: CreatedAt;
  rotated_at: Timestamp | null;
  /** Set when a password change ends the other sign-ins' refresh tokens; the grant itself stays. */
  revoked_at: Timestamp | null;
}

export interface FlashcardDecksTable {
  id: Generated<string>;
  user_id: string;
  title: string;
  created_at: CreatedAt;
  description: Generated<string>;
  course: string | null;
  updated_at: Generated<Date>;
  /** Which scheduler reviews of its cards use (domain/fsrs.ts for 'fsrs'). */
  scheduler: Generated<'sm2' | 'fsrs'>;
  /** The deck's FSRS parameters as stored (domain/fsrs.ts FsrsParameters); null until set. */
  fsrs_parameters: ColumnType<FsrsParameters | null, string | null | undefined, string | null>;
}

/** A card with its SM-2 parameters; `ease` is a double, returned exactly as stored. */
export interface FlashcardCardsTable {
  id: Generated<string>;
  deck_id: string;
  user_id: string;
  front: string;
  back: string;
  ease: Generated<number>;
  repetitions: Generated<number>;
  interval_days: Generated<number>;
  next_due_at: Timestamp;
  last_reviewed_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
  /** The card's FSRS memory (domain/fsrs.ts FsrsCardState); null until its first FSRS review. */
  fsrs_state: ColumnType<FsrsCardState | null, string | null | undefined, string | null>;
}

/** One graded review and the SM-2 parameters it produced; card_id is null once the card is deleted. */
export interface FlashcardReviewsTable {
  id: Generated<string>;
  card_id: string | null;
  user_id: string;
  grade: number;
  reviewed_at: Timestamp;
  ease: number;
  repetitions: number;
  interval_days: number;
  next_due_at: Timestamp;
  /**
   * False only on reviews recorded under the former rule, when an offline review older than the card's last one was
   * logged without moving the card; every review now moves it (services/flashcards/reviews.ts replays a late one).
   */
  applied: Generated<boolean>;
}

/** A secret calendar feed URL of a student (handlers/general/calendar.ts): only the token's hash is kept. */
export interface CalendarFeedsTable {
  id: Generated<string>;
  user_id: string;
  name: string;
  prefix: string;
  token_hash: string;
  /** Feeds created through an OAuth grant: they end with it. */
  grant_id: string | null;
  created_at: CreatedAt;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  /** The reading scopes (tasks:read, exams:read) of the credential that created it: what it may show. */
  scopes: string[];
  /** Task and exam notes in the events' descriptions, when the student turned them on. */
  include_notes: boolean;
  /** Which of tasks, exams and holidays the feed carries (the student's choice; its scopes may narrow it). */
  kinds: Generated<string[]>;
  /** Only the tasks of this course and the exams of this subject; null for every course. */
  course: string | null;
  /** A reminder this many minutes before each task and exam, in the order the student gave them. */
  reminder_minutes: Generated<number[]>;
}

export interface ExamsTable {
  id: Generated<string>;
  user_id: string;
  subject: string;
  exam_date: DateOnly;
  notes: Generated<string>;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
}

export interface ExamDecksTable {
  exam_id: string;
  deck_id: string;
  user_id: string;
}

export interface ExamTasksTable {
  exam_id: string;
  task_id: string;
  user_id: string;
}

/** A task: one-off, or one occurrence of a recurring series (recurrence + series_starts_at, series_id). */
export interface TasksTable {
  id: Generated<string>;
  user_id: string;
  title: string;
  course: string | null;
  due_at: Timestamp;
  status: ColumnType<'open' | 'completed', 'open' | 'completed' | undefined, 'open' | 'completed'>;
  completed_at: Timestamp | null;
  notes: string | null;
  priority: ColumnType<'low' | 'normal' | 'high', 'low' | 'normal' | 'high' | undefined, 'low' | 'normal' | 'high'>;
  recurrence: string | null;
  series_id: string | null;
  /** The DTSTART of `recurrence`: the due time of the occurrence the rule was set on. */
  series_starts_at: Timestamp | null;
  /** The occurrence whose closing created this one (unique: at most one successor each). */
  previous_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** The stored first response to an Idempotency-Key of a student. */
export interface IdempotencyKeysTable {
  user_id: string;
  key: string;
  request_hash: string;
  response_status: number;
  response_body: ColumnType<unknown, string, string>;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

export interface AiConversationsTable {
  id: Generated<string>;
  user_id: string;
  title: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface AiMessagesTable {
  id: Generated<string>;
  user_id: string;
  role: string;
  content: string;
  created_at: CreatedAt;
  /** Null only for messages from before conversations (demo data). */
  conversation_id: string | null;
  /** How a reply ended ('stop' | 'length' | 'interrupted' | 'error'); null for the student's messages. */
  finish_reason: string | null;
}

/** A study room; `created_by` is its owner (null only for rooms seeded without one). */
export interface StudyRoomsTable {
  id: Generated<string>;
  /** The room's title. */
  name: string;
  created_by: string | null;
  created_at: CreatedAt;
  course: string | null;
  visibility: Generated<'invite'>;
  /** The join code's public start, its SHA-256 (the code itself is shown once) and when it was made; null: none. */
  join_code_prefix: string | null;
  join_code_hash: string | null;
  join_code_created_at: Timestamp | null;
}

/** A room's members, its owner included. */
export interface StudyRoomMembersTable {
  room_id: string;
  user_id: string;
  joined_at: CreatedAt;
}

/** What a room's stream sends, numbered (services/rooms/room-stream.ts). */
export interface StudyRoomMovesTable {
  id: Generated<string>;
  room_id: string;
  kind: string;
  data: unknown;
  created_at: CreatedAt;
}

/** A room stream that announced its member present, until its `left` move is written (services/rooms/sweep.ts). */
export interface StudyRoomPresencesTable {
  stream_id: string;
  room_id: string;
  user_id: string;
  opened_at: CreatedAt;
}

/** A focus session of a room's shared timer: its state is computed from these instants (domain/focus-timer.ts). */
export interface StudyRoomSessionsTable {
  id: Generated<string>;
  room_id: string;
  started_by: string | null;
  duration_ms: number;
  started_at: Timestamp;
  paused_at: Timestamp | null;
  paused_ms: Generated<number>;
  stopped_at: Timestamp | null;
  finished_at: Timestamp | null;
}

export interface HolidayCountriesTable {
  country_code: string;
  enabled_at: CreatedAt;
}

export interface HolidaysTable {
  country_code: string;
  on_date: DateOnly;
  name: string;
  is_break: boolean;
  description: string;
}

export interface Database {
  universities: UniversitiesTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  calendar_feeds: CalendarFeedsTable;
  flashcard_decks: FlashcardDecksTable;
  flashcard_cards: FlashcardCardsTable;
  flashcard_reviews: FlashcardReviewsTable;
  exams: ExamsTable;
  exam_decks: ExamDecksTable;
  exam_tasks: ExamTasksTable;
  ai_conversations: AiConversationsTable;
  ai_messages: AiMessagesTable;
  study_rooms: StudyRoomsTable;
  study_room_members: StudyRoomMembersTable;
  study_room_sessions: StudyRoomSessionsTable;
  study_room_moves: StudyRoomMovesTable;
  study_room_presences: StudyRoomPresencesTable;
  tasks: TasksTable;
  idempotency_keys: IdempotencyKeysTable;
  holiday_countries: HolidayCountriesTable;
  holidays: HolidaysTable;
  oauth_clients: OauthClientsTable;
  oauth_grants: OauthGrantsTable;
  oauth_authorization_codes: OauthAuthorizationCodesTable;
  oauth_refresh_tokens: OauthRefreshTokensTable;
  signing_keys: SigningKeysTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_endpoint_gates: WebhookEndpointGatesTable;
  webhook_delivery_processes: WebhookDeliveryProcessesTable;
  payments: PaymentsTable;
  warnings: WarningsTable;
  readiness_versions: ReadinessVersionsTable;
  readiness_fact_versions: ReadinessFactVersionsTable;
  exam_readiness: ExamReadinessTable;
  account_leases: AccountLeasesTable;
  xp_awards: XpAwardsTable;
  stat_counter_deltas: StatCounterDeltasTable;
  activity_hour_deltas: ActivityHourDeltasTable;
}

/** The ledger behind users.xp (domain/xp.ts): one row per awarded thing, keyed so it is awarded once. */
export interface XpAwardsTable {
  user_id: string;
  award_key: string;
  source: 'review' | 'task' | 'readiness' | 'focus';
  amount: number;
  local_date: DateOnly;
  awarded_at: Timestamp;
}

export interface SigningKeysTable {
  kid: string;
  /** The private JWK, sealed by server/auth/secret-box.ts under SECRETS_KEY with context `signing-key:<kid>`. */
  private_key_sealed: string;
  created_at: CreatedAt;
  retired_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
}

type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** The outbox: one row per change worth telling, written in the change's own transaction (services/events/). */
export interface EventsTable {
  id: Generated<string>;
  type: string;
  user_id: string;
  /** The envelope's `data`, typed per event kind by the spec's `webhooks` (generated/general/types.ts). */
  data: ColumnType<unknown, string, string>;
  created_at: CreatedAt;
  fanned_out_at: NullableTimestamp;
  /** The writing transaction's id (xid8, as text) and the row's place after it: the changes feed's order. */
  txid: Generated<string>;
  seq: ColumnType<number, never, never>;
}

export interface WebhookEndpointsTable {
  id: Generated<string>;
  /** Exactly one of user_id (a student's endpoint) and client_id (an app's) is set. */
  user_id: string | null;
  client_id: string | null;
  url: string;
  event_types: string[];
  description: Generated<string>;
  enabled: Generated<boolean>;
  /** 'failing' when delivery gave up on the endpoint; null when its owner disabled it. */
  disabled_reason: string | null;
  /** Sealed by server/auth/secret-box.ts under SECRETS_KEY. */
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: NullableTimestamp;
  failing_since: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** A student's endpoint registered through an app's or institution's grant: it ends with the grant. Null: the student's own. */
  grant_id: string | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  event_id: string;
  endpoint_id: string;
  status: ColumnType<
    'pending' | 'succeeded' | 'failed',
    'pending' | 'succeeded' | 'failed' | undefined,
    'pending' | 'succeeded' | 'failed'
  >;
  attempts: Generated<number>;
  next_attempt_at: NullableTimestamp;
  last_attempt_at: NullableTimestamp;
  succeeded_at: NullableTimestamp;
  created_at: CreatedAt;
}

/** Fair delivery to an endpoint (services/webhooks/gate.ts): the lease of its one attempt in flight, and its circuit breaker. */
/** A delivering process live on the database, with its delivery settings (services/webhooks/delivery-settings.ts). */
export interface WebhookDeliveryProcessesTable {
  id: string;
  /** WEBHOOK_* name → value, as JSON. */
  settings: ColumnType<Record<string, string>, string, string>;
  started_at: Timestamp;
  live_until: Timestamp;
}

export interface WebhookEndpointGatesTable {
  endpoint_id: string;
  /** The endpoint's owner: 'user:<id>' or 'client:<id>'. */
  account: string;
  lease_job: string | null;
  lease_until: NullableTimestamp;
  /** Consecutive failed attempts; 0 after a success. */
  failures: Generated<number>;
  open_until: NullableTimestamp;
}

export interface WebhookAttemptsTable {
  id: Generated<string>;
  delivery_id: string;
  started_at: Timestamp;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
}

/** A payment for a plan, once per provider event (unique provider, provider_event_id). */
export interface PaymentsTable {
  id: Generated<string>;
  /** Null once the student deleted the account (by the foreign key): the payment is kept for accounting, anonymised. */
  user_id: ColumnType<string | null, string, never>;
  plan: 'plus' | 'contract';
  /** In the currency's minor unit. */
  amount: number;
  currency: string;
  /** 'provider': the payment provider's callback; 'manual': an operator's record. */
  provider: 'provider' | 'manual';
  provider_event_id: string;
  paid_at: Timestamp;
  created_at: CreatedAt;
}

/** A warning an operator gave a student; shown on their profile. */
export interface WarningsTable {
  id: Generated<string>;
  user_id: string;
  reason: string;
  created_at: CreatedAt;
}

/** How often a student's readiness moved; its row also orders concurrent moves (services/readiness/readiness.ts). */
export interface ReadinessVersionsTable {
  user_id: string;
  /** int8, read as a number (db/connect.ts). */
  version: number;
}

/**
 * A version of each student's readiness facts, moved by every write of them (migration 20261207_0701); no row: 0.
 */
export interface ReadinessFactVersionsTable {
  user_id: string;
  /** int8, read as a number (db/connect.ts). */
  version: number;
}

/** Per exam, the state the readiness stream last pushed and the version that pushed it; `state` null: removed. */
export interface ExamReadinessTable {
  exam_id: string;
  user_id: string;
  version: number;
  state: ColumnType<unknown, string | null, string | null>;
  moved_at: Timestamp;
}

/** One row per resource an account holds now (a stream, an export…), a lease its process renews (services/leases/). */
export interface AccountLeasesTable {
  id: Generated<string>;
  user_id: string;
  /** What is held (`stream`, `export`, `ai_reply`): the account's bound for the kind counts its rows. */
  kind: string;
  /** What it holds within the kind (a stream's room, a reply's conversation); null: nothing to tell apart. */
  grp: string | null;
  /** The grant of the access token that took it, or the grant its personal key was minted through; null: none. */
  grant_id: string | null;
  /** The personal key that took it; null: an access token, or no credential. */
  key_id: string | null;
  taken_at: CreatedAt;
  expires_at: Timestamp;
}

/** Appended by triggers on the counted tables, summed and folded by /api/v1/stats (db/migrations/20261124_0007_stats_counters.ts). */
export interface StatCounterDeltasTable {
  /** The counted table's name. */
  counter: string;
  /** int8, read as a number (db/connect.ts). */
  delta: number;
}

/** Students per hour (UTC) of their last activity, appended by triggers on users, summed and folded by /api/v1/stats (db/migrations/20261125_0401_activity_hours.ts, 20261206_0201_activity_hour_moves.ts). */
export interface ActivityHourDeltasTable {
  hour: Timestamp;
  /** int8, read as a number (db/connect.ts). */
  delta: number;
}
