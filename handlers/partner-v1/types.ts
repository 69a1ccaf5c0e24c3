import type { components, operations } from '../../generated/partner-v1/types.ts';
import type { QueryDefaults } from '../../generated/partner-v1/operations.ts';
import type { ApiKeyRecord } from '../../db/queries/api-keys.ts';
import type { HandlerContext, SurfaceHandlers } from '../../server/contract/handler-types.ts';

/** Who calls the partner surface: an API key. */
export type PartnerPrincipal = ApiKeyRecord;
export type PartnerHandlers = SurfaceHandlers<operations, QueryDefaults, PartnerPrincipal, HandlerContext>;
export type Schemas = components['schemas'];
