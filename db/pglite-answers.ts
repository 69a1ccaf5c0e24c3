// PGlite's answer to the named statements (db/prepared-statements.ts), read from its raw protocol bytes. PGlite's own
// way (execProtocol) parses every message with its fork of pg-protocol, which copies each field of each data row into
// an ArrayBuffer of its own before decoding it, and then builds each row from an array of entries; for a page of tasks
// that was most of the JavaScript around PostgreSQL's own work. Here the bytes are taken once (execProtocolRawStream)
// and each field is decoded where it lies, into a row built field by field, with the same parsers.
//
// Reading the bytes ourselves means PGlite does not see them: a NOTIFY delivered in such an answer (a statement run
// outside a transaction whose trigger notifies, which PostgreSQL delivers to its own session at the commit) is handed
// to the PGlite's listeners here, as PGlite hands on those of the answers it reads itself. It keeps them private, so
// handOnNotifications keeps a copy of who listens to what, by wrapping its listen, unlisten and onNotification.
import { protocol, type PGlite, type Results } from '@electric-sql/pglite';

export interface Field {
  name: string;
  dataTypeID: number;
}

type Parser = (text: string, typeId: number) => unknown;

/** What one exchange (its messages up to one Sync) answered. */
export interface Answer {
  /** One per command completed, in order, as PGlite's parseResults makes them. */
  results: Results[];
  /** The parameter types of a statement described in the exchange (Describe of a statement). */
  parameterTypes: number[] | undefined;
  /** The columns of the last RowDescription in the exchange ([] for NoData), undefined if none was described. */
  fields: Field[] | undefined;
  /** The first error of the exchange, as PGlite's own parser makes it (the rest of the exchange was skipped). */
  error: Error | undefined;
}

/** A NOTIFY read from an answer: PGlite's listeners of its channel and of every channel get it. */
export type Dispatch = (channel: string, payload: string) => void;

const DATA_ROW = 0x44; // D
const ROW_DESCRIPTION = 0x54; // T
const NO_DATA = 0x6e; // n
const PARAMETER_DESCRIPTION = 0x74; // t
const COMMAND_COMPLETE = 0x43; // C
const ERROR = 0x45; // E
const NOTIFICATION = 0x41; // A

/** Buffer's toString decodes UTF-8 without looking the encoding up when it is given none (a data row's every field). */
const UTF8 = undefined;

/** The commands whose tag's row count adds to affectedRows (PGlite's parseResults). */
const CHANGES = new Set(['INSERT', 'UPDATE', 'DELETE', 'COPY', 'MERGE']);

/**
 * Runs `message` (whole protocol messages ending in a Sync) in `pglite`, which must be held by the caller (PGlite's
 * query lock), and reads the answer. `described`: the columns of the statement executed without a Describe of its
 * portal (known from the Describe of the statement when it was prepared).
 */
export async function exchange(
  pglite: PGlite,
  message: Uint8Array,
  described: readonly Field[] | undefined,
  dispatch: Dispatch,
): Promise<Answer> {
  let first: Buffer | undefined;
  let more: Buffer[] | undefined;
  await pglite.execProtocolRawStream(message, {
    syncToFs: false,
    // A view of the WebAssembly memory, valid during the call only: copied.
    onRawData: (bytes) => {
      if (!first) first = Buffer.from(bytes);
      else (more ??= []).push(Buffer.from(bytes));
    },
  });
  const bytes = more ? Buffer.concat([first!, ...more]) : (first ?? Buffer.alloc(0));
  return readAnswer(bytes, pglite.parsers as Record<number, Parser>, described, dispatch);
}

/** Reads the messages of one exchange's answer (see exchange). */
export function readAnswer(
  bytes: Buffer,
  parsers: Record<number, Parser>,
  described: readonly Field[] | undefined,
  dispatch: Dispatch,
): Answer {
  const results: Results[] = [];
  let parameterTypes: number[] | undefined;
  let fields: Field[] | undefined;
  let error: Error | undefined;
  // The rows' columns until the next RowDescription, and again after each command: the described statement's.
  const describedColumns = described ? columnsOf(described, parsers) : undefined;
  let columns = describedColumns;
  let rows: Record<string, unknown>[] = [];
  let affectedRows = 0;
  let offset = 0;
  while (offset + 5 <= bytes.length) {
    const code = bytes[offset]!;
    const end = offset + 1 + bytes.readInt32BE(offset + 1);
    const start = offset + 5;
    switch (code) {
      case DATA_ROW:
        if (!columns) throw new Error('PGlite sent a data row without its row description');
        rows.push(readRow(bytes, start, columns));
        break;
      case ROW_DESCRIPTION:
        fields = readFields(bytes, start);
        columns = columnsOf(fields, parsers);
        break;
      case NO_DATA:
        fields = [];
        break;
      case PARAMETER_DESCRIPTION: {
        const count = bytes.readInt16BE(start);
        parameterTypes = new Array<number>(count);
        for (let i = 0; i < count; i++) parameterTypes[i] = bytes.readUInt32BE(start + 2 + 4 * i);
        break;
      }
      case COMMAND_COMPLETE: {
        // As PGlite's parseResults: the command tag's last number is its row count, and the rows an INSERT, UPDATE,
        // DELETE, COPY or MERGE changed add up over the exchange.
        const parts = bytes.toString(UTF8, start, end - 1).split(' ');
        const command = parts[0]!;
        const rowCount = parseInt(parts[parts.length - 1]!, 10);
        if (CHANGES.has(command)) affectedRows += rowCount;
        const result: Results = { rows, fields: columns?.fields ?? [], command, affectedRows };
        if (!Number.isNaN(rowCount)) result.rowCount = rowCount;
        results.push(result);
        rows = [];
        columns = describedColumns;
        break;
      }
      case NOTIFICATION: {
        const channelEnd = bytes.indexOf(0, start + 4);
        const channel = bytes.toString(UTF8, start + 4, channelEnd);
        dispatch(channel, bytes.toString(UTF8, channelEnd + 1, end - 1));
        break;
      }
      case ERROR:
        // Rare: PGlite's own parser makes the error, so that it is the DatabaseError its queries throw.
        if (!error)
          new protocol.Parser().parse(bytes.subarray(offset, end), (parsed) => (error = parsed as unknown as Error));
        break;
      // ParseComplete, BindComplete, CloseComplete, ReadyForQuery, a notice: nothing to read.
    }
    offset = end;
  }
  if (results.length === 0) results.push({ affectedRows: 0, rows: [], fields: [] });
  return { results, parameterTypes, fields, error };
}

interface Columns {
  fields: Field[];
  names: string[];
  types: number[];
  parsers: Array<Parser | undefined>;
}

/** A result's columns with each one's parser, looked up once per exchange rather than once per value. */
function columnsOf(fields: readonly Field[], parsers: Record<number, Parser>): Columns {
  return {
    fields: [...fields],
    names: fields.map((field) => field.name),
    types: fields.map((field) => field.dataTypeID),
    parsers: fields.map((field) => parsers[field.dataTypeID]),
  };
}

function readFields(bytes: Buffer, start: number): Field[] {
  const count = bytes.readInt16BE(start);
  const fields = new Array<Field>(count);
  let at = start + 2;
  for (let i = 0; i < count; i++) {
    const nameEnd = bytes.indexOf(0, at);
    const name = bytes.toString(UTF8, at, nameEnd);
    // Then the table's oid (4), the column's number (2), the type's oid (4), its size (2), modifier (4), format (2).
    fields[i] = { name, dataTypeID: bytes.readUInt32BE(nameEnd + 7) };
    at = nameEnd + 19;
  }
  return fields;
}

/** One row as PGlite's parseResults makes it in rowMode 'object': each text value through its type's parser. */
function readRow(bytes: Buffer, start: number, columns: Columns): Record<string, unknown> {
  const count = bytes.readInt16BE(start);
  const row: Record<string, unknown> = {};
  let at = start + 2;
  for (let i = 0; i < count; i++) {
    const length = bytes.readInt32BE(at);
    at += 4;
    if (length === -1) {
      row[columns.names[i]!] = null;
      continue;
    }
    const text = bytes.toString(UTF8, at, at + length);
    at += length;
    const parse = columns.parsers[i];
    row[columns.names[i]!] = parse ? parse(text, columns.types[i]!) : text;
  }
  return row;
}

/**
 * Bind of the statement `name` to `values` (text, or NULL), Execute of its unnamed portal (every row, in text), and
 * Sync: one buffer of the three messages, as PGlite's serializer would make them one by one.
 */
export function bindExecuteSync(name: string, values: ReadonlyArray<string | null>): Uint8Array {
  const nameLength = Buffer.byteLength(name);
  // Bind: code, length, portal, statement, the parameters' formats, their count, their values, the columns' formats.
  let length = 1 + 4 + 1 + nameLength + 1 + 2 + 2 * values.length + 2 + 2;
  for (const value of values) length += 4 + (value === null ? 0 : Buffer.byteLength(value));
  const bytes = Buffer.allocUnsafe(length + EXECUTE_SYNC.length);
  bytes[0] = 0x42; // B
  bytes.writeInt32BE(length - 1, 1);
  let at = 5;
  bytes[at++] = 0; // the unnamed portal
  at += bytes.write(name, at);
  bytes[at++] = 0;
  // Every parameter in text.
  at = bytes.writeInt16BE(values.length, at);
  for (let i = 0; i < values.length; i++) at = bytes.writeInt16BE(0, at);
  at = bytes.writeInt16BE(values.length, at);
  for (const value of values) {
    if (value === null) {
      at = bytes.writeInt32BE(-1, at);
      continue;
    }
    const written = bytes.write(value, at + 4);
    bytes.writeInt32BE(written, at);
    at += 4 + written;
  }
  at = bytes.writeInt16BE(0, at); // every column in text
  EXECUTE_SYNC.copy(bytes, at);
  return bytes;
}

/** Execute of the unnamed portal for every row, then Sync. */
const EXECUTE_SYNC = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0x53, 0, 0, 0, 4]);

/**
 * The Dispatch that hands a NOTIFY read by exchange() to `pglite`'s listeners, as PGlite does for the answers it reads
 * (each callback in a microtask of its own): those of its channel (listen) and those of every channel (onNotification).
 */
export function handOnNotifications(pglite: PGlite): Dispatch {
  const byChannel = new Map<string, Set<(payload: string) => void>>();
  const everyChannel = new Set<(channel: string, payload: string) => void>();
  const forget = (channel: string, callback: (payload: string) => void) => {
    const callbacks = byChannel.get(channel);
    callbacks?.delete(callback);
    if (callbacks?.size === 0) byChannel.delete(channel);
  };

  const listen = pglite.listen.bind(pglite);
  pglite.listen = async (channel, callback, tx) => {
    const name = postgresName(channel);
    let callbacks = byChannel.get(name);
    if (!callbacks) byChannel.set(name, (callbacks = new Set()));
    callbacks.add(callback);
    try {
      // Its unlisten calls pglite.unlisten, below.
      return await listen(channel, callback, tx);
    } catch (error) {
      forget(name, callback);
      throw error;
    }
  };
  const unlisten = pglite.unlisten.bind(pglite);
  pglite.unlisten = async (channel, callback, tx) => {
    // Without a callback PGlite keeps its listeners and only stops the database's LISTEN: so does this copy.
    if (callback) forget(postgresName(channel), callback);
    return unlisten(channel, callback, tx);
  };
  const onNotification = pglite.onNotification.bind(pglite);
  pglite.onNotification = (callback) => {
    everyChannel.add(callback);
    const off = onNotification(callback);
    return () => {
      everyChannel.delete(callback);
      off();
    };
  };
  const offNotification = pglite.offNotification.bind(pglite);
  pglite.offNotification = (callback) => {
    everyChannel.delete(callback);
    offNotification(callback);
  };

  return (channel, payload) => {
    for (const callback of byChannel.get(channel) ?? []) queueMicrotask(() => callback(payload));
    for (const callback of everyChannel) queueMicrotask(() => callback(channel, payload));
  };
}

/** A channel's name as PostgreSQL reports it in a notification (PGlite's own rule: quoted as is, else lower case). */
function postgresName(channel: string): string {
  return channel.startsWith('"') && channel.endsWith('"') ? channel.slice(1, -1) : channel.toLowerCase();
}
