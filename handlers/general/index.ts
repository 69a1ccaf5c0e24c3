// Every operation of spec/general, by operationId. `satisfies` makes a missing, extra or misspelled handler a
// compile error.
import { createAccount } from './accounts.ts';
import { createMyApiKey, getMyProfile, listMyApiKeys, revokeMyApiKey, updateMyProfile } from './profile.ts';
import { getSchedule } from './schedule.ts';
import { createTask, deleteTask, getTask, listTasks, updateTask } from './tasks.ts';
import { getTodayLoop } from './today.ts';
import type { GeneralHandlers } from './types.ts';

export const generalHandlers = {
  createAccount,
  getMyProfile,
  updateMyProfile,
  listMyApiKeys,
  createMyApiKey,
  revokeMyApiKey,
  listTasks,
  createTask,
  getTask,
  updateTask,
  deleteTask,
  getSchedule,
  getTodayLoop,
} satisfies GeneralHandlers;
