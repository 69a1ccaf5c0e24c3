// Which tutor answers: an OpenAI-compatible service when AI_BASE_URL and AI_API_KEY are set, else the built-in one.
import type { Config } from '../../../server/app/config.ts';
import { localTutor } from './local.ts';
import { openAiCompatibleTutor } from './openai-compatible.ts';
import type { Tutor } from './types.ts';

export function tutorFromConfig(ai: Config['ai']): Tutor {
  return ai ? openAiCompatibleTutor(ai) : localTutor();
}
