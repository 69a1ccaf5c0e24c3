// Reads a text/event-stream body the way a browser's EventSource does (WHATWG HTML, "Server-sent events"):
// events end at a blank line, `event:`, `id:` and `data:` fields, lines starting with ':' are comments.
export interface ServerSentEvent {
  event: string;
  id: string | undefined;
  data: string;
}

export function parseEventStream(body: string): ServerSentEvent[] {
  const events: ServerSentEvent[] = [];
  for (const block of body.replace(/\r\n?/g, '\n').split('\n\n')) {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'id') id = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0) events.push({ event, id, data: data.join('\n') });
  }
  return events;
}
