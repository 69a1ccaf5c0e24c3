// Which tutor answers: an OpenAI-compatible service when AI_BASE_URL and AI_API_KEY are set, else the built-in one.
import { localTutor } from './local.ts';
import { openAiCompatibleTutor } from './openai-compatible.ts';
import type { Tutor } from './types.ts';

/** An OpenAI-compatible chat-completions service (AI_BASE_URL, AI_API_KEY, AI_MODEL). */
export interface AiService {
  baseUrl: string;
  apiKey: string;
  model: string;
}

export function tutorFromConfig(ai: AiService | undefined): Tutor {
  return ai ? openAiCompatibleTutor(ai) : localTutor();
}
