// Every operation of spec/general, by operationId. `satisfies` makes a missing, extra or misspelled handler a
// compile error.
import { changeMyPassword, createAccount, deleteMyAccount, exportMyAccount } from './accounts.ts';
import { createMyCalendarFeed, getCalendarFeed, listMyCalendarFeeds, revokeMyCalendarFeed } from './calendar.ts';
import { deleteConversation, getConversation, listConversations, streamTutorChat } from './ai.ts';
import { listEvents } from './events.ts';
import { createExam, deleteExam, getExam, listExams, streamExamReadiness, updateExam } from './exams.ts';
import { createCard, createDeck, deleteCard, deleteDeck, getCard, getDeck, listCards, listDecks, reviewCard, updateCard, updateDeck, createCards, reviewCards } from './flashcards.ts';
import { receivePaymentEvent } from './payments.ts';
import { createMyApiKey, getMyProfile, listMyApiKeys, listMyAuthorizations, revokeMyApiKey, revokeMyAuthorization, updateMyProfile } from './profile.ts';
import { controlRoomTimer, createRoom, deleteRoom, getRoom, joinRoom, leaveRoom, listMyRooms, listRoomMembers, revokeRoomJoinCode, rotateRoomJoinCode, streamRoom } from './rooms.ts';
import { getSchedule } from './schedule.ts';
import { createTask, deleteTask, getTask, listTasks, updateTask } from './tasks.ts';
import { getTodayLoop } from './today.ts';
import type { GeneralHandlers } from './types.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  resendWebhookDelivery,
  rotateWebhookEndpointSecret,
  sendWebhookTestEvent,
  updateWebhookEndpoint,
} from './webhooks.ts';

export const generalHandlers = {
  createAccount,
  changeMyPassword,
  deleteMyAccount,
  exportMyAccount,
  getMyProfile,
  updateMyProfile,
  listMyApiKeys,
  createMyApiKey,
  revokeMyApiKey,
  listMyAuthorizations,
  listMyCalendarFeeds,
  createMyCalendarFeed,
  revokeMyCalendarFeed,
  getCalendarFeed,
  revokeMyAuthorization,
  listEvents,
  listTasks,
  createTask,
  getTask,
  updateTask,
  deleteTask,
  getSchedule,
  getTodayLoop,
  listDecks,
  createDeck,
  getDeck,
  updateDeck,
  deleteDeck,
  listCards,
  createCard,
  getCard,
  updateCard,
  deleteCard,
  reviewCard,
  createCards,
  reviewCards,
  listExams,
  createExam,
  getExam,
  streamExamReadiness,
  updateExam,
  deleteExam,
  streamTutorChat,
  receivePaymentEvent,
  listConversations,
  getConversation,
  deleteConversation,
  listWebhookEndpoints,
  createWebhookEndpoint,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookEndpointSecret,
  sendWebhookTestEvent,
  listWebhookDeliveries,
  resendWebhookDelivery,
  listMyRooms,
  createRoom,
  getRoom,
  deleteRoom,
  listRoomMembers,
  joinRoom,
  leaveRoom,
  rotateRoomJoinCode,
  revokeRoomJoinCode,
  controlRoomTimer,
  streamRoom,
} satisfies GeneralHandlers;
