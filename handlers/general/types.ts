import type { components, operations } from '../../generated/general/types.ts';
import type { OperationId, QueryDefaults } from '../../generated/general/operations.ts';
import type { SurfaceHandlers } from '../../server/contract/handler-types.ts';
import type { GeneralPrincipal } from '../../server/auth/principal.ts';
import type { GeneralContext } from './context.ts';

/**
 * Who calls the general surface: one student, through an access token or a personal key. Only the operations under
 * `paths` are served; those under `webhooks` are requests this service sends (services/events/).
 */
export type GeneralHandlers = SurfaceHandlers<
  Pick<operations, OperationId>,
  QueryDefaults,
  GeneralPrincipal,
  GeneralContext
>;
export type Schemas = components['schemas'];
