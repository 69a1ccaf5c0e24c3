// What managing webhook endpoints needs from the process: the box that seals their signing secrets, and the rule of
// where they may point.
import type { SecretBox } from '../../server/auth/secret-box.ts';
import type { TargetOptions } from './target-address.ts';

export interface WebhookEndpointSettings {
  secrets: SecretBox;
  targets: TargetOptions;
}
