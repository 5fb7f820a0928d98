/**
 * OTLP/HTTP's protobuf body (`application/x-protobuf`): an `ExportTraceServiceRequest` decoded from the wire format
 * into the same field names as OTLP/JSON, so `spansFromRequest` reads both. Only the messages a trace export holds
 * are described (opentelemetry-proto's trace/v1, common/v1 and resource/v1; span links are skipped); unknown fields
 * are skipped as protobuf asks, a field of the wrong wire type or a truncated body is `malformed`.
 *
 * Written here rather than loaded from a protobuf library with the .proto files: the schema is fixed, small and
 * versioned by OTLP's stability guarantees, and the decoder is the one place bytes from the network are read, so it
 * should be short enough to read whole.
 */
import { TraceInputError } from './traceErrors';
import { spansFromRequest, tooManyValues } from './otlpRequest';
import { TRACE_LIMITS, type OtlpBatch } from './otlpSpans';

type Scalar = 'string' | 'bytes' | 'bool' | 'int64' | 'uint32' | 'enum' | 'fixed64' | 'fixed32' | 'double';
type MessageName =
  | 'ExportTraceServiceRequest'
  | 'ResourceSpans'
  | 'Resource'
  | 'ScopeSpans'
  | 'InstrumentationScope'
  | 'Span'
  | 'Event'
  | 'Status'
  | 'KeyValue'
  | 'AnyValue'
  | 'ArrayValue'
  | 'KeyValueList';
interface Field {
  name: string;
  type: Scalar | MessageName;
  repeated?: boolean;
}

const MESSAGES: Record<MessageName, Record<number, Field>> = {
  ExportTraceServiceRequest: { 1: { name: 'resourceSpans', type: 'ResourceSpans', repeated: true } },
  ResourceSpans: {
    1: { name: 'resource', type: 'Resource' },
    2: { name: 'scopeSpans', type: 'ScopeSpans', repeated: true },
    3: { name: 'schemaUrl', type: 'string' },
  },
  Resource: { 1: { name: 'attributes', type: 'KeyValue', repeated: true }, 2: { name: 'droppedAttributesCount', type: 'uint32' } },
  ScopeSpans: {
    1: { name: 'scope', type: 'InstrumentationScope' },
    2: { name: 'spans', type: 'Span', repeated: true },
    3: { name: 'schemaUrl', type: 'string' },
  },
  InstrumentationScope: {
    1: { name: 'name', type: 'string' },
    2: { name: 'version', type: 'string' },
    3: { name: 'attributes', type: 'KeyValue', repeated: true },
    4: { name: 'droppedAttributesCount', type: 'uint32' },
  },
  Span: {
    1: { name: 'traceId', type: 'bytes' },
    2: { name: 'spanId', type: 'bytes' },
    3: { name: 'traceState', type: 'string' },
    4: { name: 'parentSpanId', type: 'bytes' },
    5: { name: 'name', type: 'string' },
    6: { name: 'kind', type: 'enum' },
    7: { name: 'startTimeUnixNano', type: 'fixed64' },
    8: { name: 'endTimeUnixNano', type: 'fixed64' },
    9: { name: 'attributes', type: 'KeyValue', repeated: true },
    10: { name: 'droppedAttributesCount', type: 'uint32' },
    11: { name: 'events', type: 'Event', repeated: true },
    12: { name: 'droppedEventsCount', type: 'uint32' },
    14: { name: 'droppedLinksCount', type: 'uint32' },
    15: { name: 'status', type: 'Status' },
    16: { name: 'flags', type: 'fixed32' },
  },
  Event: {
    1: { name: 'timeUnixNano', type: 'fixed64' },
    2: { name: 'name', type: 'string' },
    3: { name: 'attributes', type: 'KeyValue', repeated: true },
    4: { name: 'droppedAttributesCount', type: 'uint32' },
  },
  Status: { 2: { name: 'message', type: 'string' }, 3: { name: 'code', type: 'enum' } },
  KeyValue: { 1: { name: 'key', type: 'string' }, 2: { name: 'value', type: 'AnyValue' } },
  AnyValue: {
    1: { name: 'stringValue', type: 'string' },
    2: { name: 'boolValue', type: 'bool' },
    3: { name: 'intValue', type: 'int64' },
    4: { name: 'doubleValue', type: 'double' },
    5: { name: 'arrayValue', type: 'ArrayValue' },
    6: { name: 'kvlistValue', type: 'KeyValueList' },
    7: { name: 'bytesValue', type: 'bytes' },
  },
  ArrayValue: { 1: { name: 'values', type: 'AnyValue', repeated: true } },
  KeyValueList: { 1: { name: 'values', type: 'KeyValue', repeated: true } },
};

/** The wire type each field type is written with (packed repeated scalars do not occur in these messages). */
const WIRE: Record<Scalar, number> = { string: 2, bytes: 2, bool: 0, int64: 0, uint32: 0, enum: 0, fixed64: 1, fixed32: 5, double: 1 };
/** Nesting deeper than any trace export needs (AnyValue nests, and a hostile body could nest it without end). */
const MAX_DEPTH = 40;
const utf8 = new TextDecoder('utf-8', { fatal: false });

class Reader {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start: number,
    /** Where the message being read ends (moved in and out by `countFields`, which walks nested messages in place). */
    public end: number,
  ) {
    this.pos = start;
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.end) throw malformed('a varint runs past the end');
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    throw malformed('a varint longer than 10 bytes');
  }

  /** A varint that must fit a JS number (a tag, a length). */
  smallVarint(): number {
    // The common case (one byte) without BigInt.
    if (this.pos < this.end && this.buf[this.pos]! < 0x80) return this.buf[this.pos++]!;
    const v = this.varint();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw malformed('a length or tag too large');
    return Number(v);
  }

  take(n: number): Uint8Array {
    const start = this.pos;
    this.advance(n);
    return this.buf.subarray(start, this.pos);
  }

  advance(n: number): void {
    if (n < 0 || this.pos + n > this.end) throw malformed('a field runs past the end of its message');
    this.pos += n;
  }

  /** Past a field's value, building nothing. */
  skip(wireType: number): void {
    if (wireType === 0) {
      for (let i = 0; ; i++) {
        if (i === 10) throw malformed('a varint longer than 10 bytes');
        if (this.pos >= this.end) throw malformed('a varint runs past the end');
        if ((this.buf[this.pos++]! & 0x80) === 0) return;
      }
    } else if (wireType === 1) this.advance(8);
    else if (wireType === 2) this.advance(this.smallVarint());
    else if (wireType === 5) this.advance(4);
    else throw malformed(`wire type ${wireType} (groups are not used by OTLP)`);
  }
}

const malformed = (what: string): TraceInputError => new TraceInputError('malformed', `The protobuf body does not decode: ${what}.`);

/**
 * The next field `type` declares, read up to its value, its wire type checked (the fields it does not declare are
 * skipped); undefined at the message's end. What decoding and counting (`countFields`) both read.
 */
function nextField(r: Reader, type: MessageName): { field: Field; wireType: number } | undefined {
  const fields = MESSAGES[type];
  while (r.pos < r.end) {
    const tag = r.smallVarint();
    const number = Math.floor(tag / 8);
    const wireType = tag & 7;
    const field = fields[number];
    if (!field || number === 0) {
      r.skip(wireType);
      continue;
    }
    const expected = field.type in WIRE ? WIRE[field.type as Scalar] : 2;
    if (wireType !== expected) throw malformed(`${type}.${field.name} has wire type ${wireType}, not ${expected}`);
    return { field, wireType };
  }
  return undefined;
}

function decodeMessage(r: Reader, type: MessageName, depth: number): Record<string, unknown> {
  if (depth > MAX_DEPTH) throw malformed(`messages nested more than ${MAX_DEPTH} deep`);
  const out: Record<string, unknown> = {};
  for (let next = nextField(r, type); next; next = nextField(r, type)) {
    const { field } = next;
    const value = decodeField(r, field.type, depth);
    if (field.repeated) ((out[field.name] ??= []) as unknown[]).push(value);
    else out[field.name] = value;
  }
  return out;
}

function decodeField(r: Reader, type: Scalar | MessageName, depth: number): unknown {
  switch (type) {
    case 'string':
      return utf8.decode(r.take(r.smallVarint()));
    case 'bytes':
      return r.take(r.smallVarint());
    case 'bool':
      return r.varint() !== 0n;
    case 'int64':
      return BigInt.asIntN(64, r.varint());
    case 'uint32':
    case 'enum':
      return Number(BigInt.asIntN(32, r.varint()));
    case 'fixed64': {
      const b = r.take(8);
      return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
    }
    case 'fixed32': {
      const b = r.take(4);
      return new DataView(b.buffer, b.byteOffset, 4).getUint32(0, true);
    }
    case 'double': {
      const b = r.take(8);
      return new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
    }
    default: {
      const length = r.smallVarint();
      const end = r.pos + length;
      if (end > r.end) throw malformed(`a ${type} runs past the end of its parent`);
      const inner = new Reader(r.buf, r.pos, end);
      const message = decodeMessage(inner, type, depth + 1);
      r.pos = end;
      return message;
    }
  }
}

/**
 * Counts the fields of a message that decoding would build, building nothing, and throws once there are more than the
 * budget (`TRACE_LIMITS.maxValues`) or where decoding would find the body malformed. Decoding keeps every field until
 * the spans are read, and 32 MiB of two-byte empty messages are 16 million objects (1.4 GB): counted first, such a
 * body is refused for the cost of reading it.
 */
function countFields(r: Reader, type: MessageName, depth: number, budget: { left: number }): void {
  if (depth > MAX_DEPTH) throw malformed(`messages nested more than ${MAX_DEPTH} deep`);
  for (let next = nextField(r, type); next; next = nextField(r, type)) {
    const { field, wireType } = next;
    const scalar = field.type in WIRE;
    // A message counts twice, a scalar once: as its JSON would count (`{` and `,`, or `,` alone), and about as it costs.
    budget.left -= scalar ? 1 : 2;
    if (budget.left < 0) throw tooManyValues();
    if (scalar) {
      r.skip(wireType);
      continue;
    }
    const length = r.smallVarint();
    const end = r.pos + length;
    if (end > r.end) throw malformed(`a ${field.type} runs past the end of its parent`);
    const outer = r.end;
    r.end = end;
    countFields(r, field.type as MessageName, depth + 1, budget);
    r.end = outer;
  }
}

/** An `ExportTraceServiceRequest` in protobuf → its spans. An empty body is an empty request, as in protobuf. */
export function parseOtlpProtobuf(body: Uint8Array): OtlpBatch {
  countFields(new Reader(body, 0, body.length), 'ExportTraceServiceRequest', 0, { left: TRACE_LIMITS.maxValues });
  const request = decodeMessage(new Reader(body, 0, body.length), 'ExportTraceServiceRequest', 0);
  request.resourceSpans ??= [];
  return spansFromRequest(request);
}
