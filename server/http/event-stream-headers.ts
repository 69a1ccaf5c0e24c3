// better-sse writes `Connection: keep-alive` on every event stream, whatever the request asked. To a request with
// `Connection: close` that promises a socket Node closes after the stream (its parser refuses anything more), so a
// client pooling connections sent its next request there and got Node's bare 400 without a body: a proxy in front
// (Prism) reported it as an empty response to an unrelated request.
/** better-sse's `headers` option for every stream: Node sets Connection from the request, as for any response. */
export const EVENT_STREAM_HEADERS = { Connection: undefined };
