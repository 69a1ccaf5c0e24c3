// The types that tie handlers to the spec. A surface's handler map must satisfy `SurfaceHandlers`, built from
// the operations openapi-typescript generated: a missing handler, an extra one, a wrong parameter name or a
// body that does not match the documented response fails `npm run typecheck`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Db } from '../../db/connect.ts';
import type { Lifecycle } from '../process/lifecycle.ts';

interface OperationShape {
  parameters: { query?: unknown; path?: unknown; header?: unknown };
  requestBody?: unknown;
  responses: object;
}

type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
type SuccessStatus<O extends OperationShape> = Extract<keyof O['responses'], 200 | 201 | 202 | 204>;

export type HandlerResult<O extends OperationShape> = {
  [S in SuccessStatus<O>]: { status: S; body: JsonBody<O['responses'][S]>; headers?: Record<string, string> };
}[SuccessStatus<O>];

type Query<O extends OperationShape, Defaulted extends PropertyKey> =
  NonNullable<O['parameters']['query']> extends infer Q
    ? Omit<Q, Defaulted & keyof Q> & Required<Pick<Q, Defaulted & keyof Q>>
    : never;

type RequestBody<O extends OperationShape> =
  NonNullable<O['requestBody']> extends { content: { 'application/json': infer B } } ? B : undefined;

export interface HandlerInput<O extends OperationShape, Defaulted extends PropertyKey, Principal> {
  path: NonNullable<O['parameters']['path']>;
  /** Validated and coerced by the spec; parameters with a default are always present. */
  query: Query<O, Defaulted>;
  /** The header parameters the spec declares, under their spec names. */
  headers: NonNullable<O['parameters']['header']>;
  /** The JSON body, validated by the spec. */
  body: RequestBody<O>;
  /** The body's bytes as received, for operations that verify a signature over them. */
  rawBody: Buffer | undefined;
  principal: Principal;
}

/** What every surface gives its handlers; a surface with more (the general one) extends it with its own type. */
export interface HandlerContext {
  db: Db;
  now: () => Date;
  /** The process's stop: streams end when it says so; every handler is held until it returns. */
  lifecycle: Lifecycle;
  /** The surface's contract version (`info.version` of its spec). */
  apiVersion: string;
}

export type Handler<
  O extends OperationShape,
  Defaulted extends PropertyKey,
  Principal,
  Context extends HandlerContext,
> = (input: HandlerInput<O, Defaulted, Principal>, context: Context) => Promise<HandlerResult<O>>;

/**
 * Streaming operations write the response themselves, and only they may: a `text/event-stream` 200, or a download (a
 * 200 with `Content-Disposition`), whose document is written as it is read rather than built in memory first.
 */
export type StreamingHandler<
  O extends OperationShape,
  Defaulted extends PropertyKey,
  Principal,
  Context extends HandlerContext,
> = (
  input: HandlerInput<O, Defaulted, Principal>,
  context: Context,
  http: { req: IncomingMessage; res: ServerResponse },
) => Promise<void>;

type IsStreaming<O extends OperationShape> = O['responses'] extends
  | { 200: { content: { 'text/event-stream': unknown } } }
  | { 200: { headers: { 'Content-Disposition': unknown } } }
  ? true
  : false;

export type SurfaceHandlers<
  Operations extends { [K in keyof Operations]: OperationShape },
  QueryDefaults,
  Principal,
  Context extends HandlerContext,
> = {
  [K in keyof Operations]: IsStreaming<Operations[K]> extends true
    ? StreamingHandler<
        Operations[K],
        K extends keyof QueryDefaults ? QueryDefaults[K] & PropertyKey : never,
        Principal,
        Context
      >
    : Handler<
        Operations[K],
        K extends keyof QueryDefaults ? QueryDefaults[K] & PropertyKey : never,
        Principal,
        Context
      >;
};
