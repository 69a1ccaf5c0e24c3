// The types that tie handlers to the spec. A surface's handler map must satisfy `SurfaceHandlers`, built from
// the operations openapi-typescript generated: a missing handler, an extra one, a wrong parameter name or a
// body that does not match the documented response fails `npm run typecheck`.
import type { Db } from '../db/connect.ts';

interface OperationShape {
  parameters: { query?: unknown; path?: unknown };
  responses: object;
}

type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type SuccessStatus<O extends OperationShape> = Extract<keyof O['responses'], 200 | 201 | 202 | 204>;

export type HandlerResult<O extends OperationShape> = {
  [S in SuccessStatus<O>]: { status: S; body: JsonBody<O['responses'][S]>; headers?: Record<string, string> };
}[SuccessStatus<O>];

type Query<O extends OperationShape, Defaulted extends PropertyKey> =
  NonNullable<O['parameters']['query']> extends infer Q ? Omit<Q, Defaulted & keyof Q> & Required<Pick<Q, Defaulted & keyof Q>> : never;

export interface HandlerInput<O extends OperationShape, Defaulted extends PropertyKey, Principal> {
  path: NonNullable<O['parameters']['path']>;
  /** Validated and coerced by the spec; parameters with a default are always present. */
  query: Query<O, Defaulted>;
  principal: Principal;
}

export interface HandlerContext {
  db: Db;
  now: () => Date;
  /** The surface's contract version (`info.version` of its spec). */
  apiVersion: string;
}

export type Handler<O extends OperationShape, Defaulted extends PropertyKey, Principal> = (
  input: HandlerInput<O, Defaulted, Principal>,
  context: HandlerContext,
) => Promise<HandlerResult<O>>;

export type SurfaceHandlers<Operations extends { [K in keyof Operations]: OperationShape }, QueryDefaults, Principal> = {
  [K in keyof Operations]: Handler<Operations[K], K extends keyof QueryDefaults ? QueryDefaults[K] & PropertyKey : never, Principal>;
};
