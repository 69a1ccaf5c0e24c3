// The ordered list of migrations. A new migration is a new file here, named by date; old ones never change.
import type { Migration } from 'kysely';
import * as partnerV1 from './20261122_0001_partner_v1.ts';
import * as accountsOauth from './20261122_0002_accounts_oauth.ts';
import * as tasks from './20261122_0003_tasks.ts';
import * as flashcardsExams from './20261122_0004_flashcards_exams.ts';
import * as aiConversations from './20261122_0005_ai_conversations.ts';
import * as studyStreak from './20261122_0006_study_streak.ts';
import * as avatarHttpsOnly from './20261123_0001_avatar_https_only.ts';
import * as personalKeyGrants from './20261123_0002_personal_key_grants.ts';
import * as stableUniversityIds from './20261123_0003_stable_university_ids.ts';
import * as signingKeys from './20261123_0004_signing_keys.ts';
import * as eventsWebhooks from './20261123_0005_events_webhooks.ts';
import * as webhookDeliveryQueue from './20261123_0006_webhook_delivery_queue.ts';
import * as paymentsWarnings from './20261123_0007_payments_warnings.ts';
import * as examReadiness from './20261123_0008_exam_readiness.ts';
import * as webhookJobs from './20261124_0001_webhook_jobs.ts';
import * as accountLifecycle from './20261124_0003_account_lifecycle.ts';
import * as xpFsrs from './20261124_0004_xp_fsrs.ts';
import * as pendingDeliveries from './20261124_0005_pending_deliveries.ts';
import * as institutions from './20261124_0006_institutions.ts';
import * as statsCounters from './20261124_0007_stats_counters.ts';
import * as exportKeysetIndexes from './20261124_0008_export_keyset_indexes.ts';
import * as completedTasksIndex from './20261125_0201_completed_tasks_index.ts';
import * as activityHours from './20261125_0401_activity_hours.ts';
import * as leaderboardChanges from './20261126_0001_leaderboard_changes.ts';
import * as statsChanges from './20261126_0002_stats_changes.ts';
import * as grantOwnedEndpoints from './20261127_0101_grant_owned_endpoints.ts';
import * as exportLeases from './20261127_0201_export_leases.ts';
import * as openStreams from './20261127_0401_open_streams.ts';
import * as webhookEndpointGates from './20261127_0501_webhook_endpoint_gates.ts';
import * as outboxNotify from './20261127_0701_outbox_notify.ts';
import * as calendarFeeds from './20261127_0901_calendar_feeds.ts';
import * as eventsFeed from './20261127_0902_events_feed.ts';
import * as studyRooms from './20261127_1101_study_rooms.ts';
import * as roomMoves from './20261127_1102_room_moves.ts';
import * as roomSweep from './20261127_1103_room_sweep.ts';
import * as notifyAfterCommit from './20261128_0101_notify_after_commit.ts';
import * as calendarFeedViews from './20261206_0101_calendar_feed_views.ts';
import * as webhookDeliveryProcesses from './20261206_0102_webhook_delivery_processes.ts';
import * as activityHourMoves from './20261206_0201_activity_hour_moves.ts';
import * as calendarFeedChoices from './20261207_0101_calendar_feed_choices.ts';
import * as outboxRowsNobodyReceives from './20261207_0301_outbox_rows_nobody_receives.ts';
import * as gradedReviewGate from './20261207_0501_graded_review_gate.ts';
import * as gradedReviewReadinessFacts from './20261207_0601_graded_review_readiness_facts.ts';
import * as readinessFactVersions from './20261207_0701_readiness_fact_versions.ts';
import * as accountLeases from './20261206_0301_account_leases.ts';

export const migrations: Record<string, Migration> = {
  '20261122_0001_partner_v1': partnerV1,
  '20261122_0002_accounts_oauth': accountsOauth,
  '20261122_0003_tasks': tasks,
  '20261122_0004_flashcards_exams': flashcardsExams,
  '20261122_0005_ai_conversations': aiConversations,
  '20261122_0006_study_streak': studyStreak,
  '20261123_0001_avatar_https_only': avatarHttpsOnly,
  '20261123_0002_personal_key_grants': personalKeyGrants,
  '20261123_0003_stable_university_ids': stableUniversityIds,
  '20261123_0004_signing_keys': signingKeys,
  '20261123_0005_events_webhooks': eventsWebhooks,
  '20261123_0006_webhook_delivery_queue': webhookDeliveryQueue,
  '20261123_0007_payments_warnings': paymentsWarnings,
  '20261123_0008_exam_readiness': examReadiness,
  '20261124_0001_webhook_jobs': webhookJobs,
  '20261124_0003_account_lifecycle': accountLifecycle,
  '20261124_0004_xp_fsrs': xpFsrs,
  '20261124_0005_pending_deliveries': pendingDeliveries,
  '20261124_0006_institutions': institutions,
  '20261124_0007_stats_counters': statsCounters,
  '20261124_0008_export_keyset_indexes': exportKeysetIndexes,
  '20261125_0201_completed_tasks_index': completedTasksIndex,
  '20261125_0401_activity_hours': activityHours,
  '20261126_0001_leaderboard_changes': leaderboardChanges,
  '20261126_0002_stats_changes': statsChanges,
  '20261127_0101_grant_owned_endpoints': grantOwnedEndpoints,
  '20261127_0201_export_leases': exportLeases,
  '20261127_0401_open_streams': openStreams,
  '20261127_0501_webhook_endpoint_gates': webhookEndpointGates,
  '20261127_0701_outbox_notify': outboxNotify,
  '20261127_0901_calendar_feeds': calendarFeeds,
  '20261127_0902_events_feed': eventsFeed,
  '20261127_1101_study_rooms': studyRooms,
  '20261127_1102_room_moves': roomMoves,
  '20261127_1103_room_sweep': roomSweep,
  '20261128_0101_notify_after_commit': notifyAfterCommit,
  '20261206_0101_calendar_feed_views': calendarFeedViews,
  '20261206_0102_webhook_delivery_processes': webhookDeliveryProcesses,
  '20261206_0201_activity_hour_moves': activityHourMoves,
  '20261206_0301_account_leases': accountLeases,
  '20261207_0101_calendar_feed_choices': calendarFeedChoices,
  '20261207_0301_outbox_rows_nobody_receives': outboxRowsNobodyReceives,
  '20261207_0501_graded_review_gate': gradedReviewGate,
  '20261207_0601_graded_review_readiness_facts': gradedReviewReadinessFacts,
  '20261207_0701_readiness_fact_versions': readinessFactVersions,
};
