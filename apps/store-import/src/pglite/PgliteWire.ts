/**
 * The few PostgreSQL wire-protocol messages the PGlite client sends, and a reader for the
 * backend's answers (protocol 3.0, text format throughout). PGlite's own `query` sends Parse,
 * Describe, Bind, Describe, Execute and Sync as six separate round trips into the WebAssembly
 * backend and turns every answer into message objects before reading them; writing one batch
 * and reading the bytes once is most of the saving (see PgliteClient.ts).
 */

const encoder = new TextEncoder()

/** Builds one batch of frontend messages into a reusable, growing buffer. */
export class Writer {
  private buffer = new Uint8Array(4096)
  private view = new DataView(this.buffer.buffer)
  private offset = 0

  private ensure(extra: number) {
    if (this.offset + extra <= this.buffer.length) return
    let size = this.buffer.length * 2
    while (size < this.offset + extra) size *= 2
    const next = new Uint8Array(size)
    next.set(this.buffer.subarray(0, this.offset))
    this.buffer = next
    this.view = new DataView(next.buffer)
  }

  private byte(value: number) {
    this.ensure(1)
    this.buffer[this.offset++] = value
  }

  private int16(value: number) {
    this.ensure(2)
    this.view.setInt16(this.offset, value)
    this.offset += 2
  }

  private int32(value: number) {
    this.ensure(4)
    this.view.setInt32(this.offset, value)
    this.offset += 4
  }

  /** A string's UTF-8 bytes, without a terminator. */
  private text(value: string) {
    this.ensure(value.length * 3)
    this.offset += encoder.encodeInto(value, this.buffer.subarray(this.offset)).written
  }

  private cstring(value: string) {
    this.text(value)
    this.byte(0)
  }

  /** Starts a message of `type`; returns where its length goes, for `end`. */
  private begin(type: string): number {
    this.byte(type.charCodeAt(0))
    const at = this.offset
    this.int32(0)
    return at
  }

  private end(at: number) {
    this.view.setInt32(at, this.offset - at)
  }

  /** Parse: prepares `text` as statement `name` ("" is the unnamed statement), types inferred. */
  parse(name: string, text: string): this {
    const at = this.begin("P")
    this.cstring(name)
    this.cstring(text)
    this.int16(0)
    this.end(at)
    return this
  }

  /** Describe of a prepared statement: its parameter types and its row description. */
  describeStatement(name: string): this {
    return this.aimed("D", 0x53, name) // 'S'
  }

  /** Describe of the unnamed portal: the row description of what Execute will return. */
  describePortal(): this {
    return this.aimed("D", 0x50, "") // 'P'
  }

  /** A Describe or Close: its message type, what it is aimed at ('S' statement, 'P' portal), the name. */
  private aimed(type: string, target: number, name: string): this {
    const at = this.begin(type)
    this.byte(target)
    this.cstring(name)
    this.end(at)
    return this
  }

  /** Bind: the unnamed portal over statement `name`, parameters and results in text format. */
  bind(name: string, values: ReadonlyArray<string | null>): this {
    const at = this.begin("B")
    this.cstring("")
    this.cstring(name)
    this.int16(0)
    this.int16(values.length)
    for (const value of values) {
      if (value === null) {
        this.int32(-1)
        continue
      }
      const lengthAt = this.offset
      this.int32(0)
      const start = this.offset
      this.text(value)
      this.view.setInt32(lengthAt, this.offset - start)
    }
    this.int16(0)
    this.end(at)
    return this
  }

  /** Execute: runs the unnamed portal to completion. */
  execute(): this {
    const at = this.begin("E")
    this.cstring("")
    this.int32(0)
    this.end(at)
    return this
  }

  /** Close of prepared statement `name`. */
  closeStatement(name: string): this {
    return this.aimed("C", 0x53, name) // 'S'
  }

  /** Simple query: one or more statements without parameters. */
  query(text: string): this {
    const at = this.begin("Q")
    this.cstring(text)
    this.end(at)
    return this
  }

  /** Sync: ends the batch; the backend answers ReadyForQuery. */
  sync(): this {
    this.byte(0x53) // 'S'
    this.int32(4)
    return this
  }

  /** The batch written so far (a copy), leaving the writer empty for the next one. */
  flush(): Uint8Array {
    const out = this.buffer.slice(0, this.offset)
    this.offset = 0
    return out
  }
}

/** Collects the backend's answer, which PGlite hands over in pieces that it then reuses. */
export class Collector {
  private buffer = Buffer.allocUnsafe(65536)
  length = 0

  /** The callback for PGlite's `execProtocolRawStream`. */
  readonly onRawData = (bytes: Uint8Array): void => {
    if (this.length + bytes.length > this.buffer.length) {
      let size = this.buffer.length * 2
      while (size < this.length + bytes.length) size *= 2
      const next = Buffer.allocUnsafe(size)
      this.buffer.copy(next, 0, 0, this.length)
      this.buffer = next
    }
    this.buffer.set(bytes, this.length)
    this.length += bytes.length
  }

  /** Reads what was collected, then forgets it. */
  take(): Reader {
    const reader = new Reader(this.buffer, this.length)
    this.length = 0
    // A large answer's buffer is not kept for good.
    if (this.buffer.length > 1 << 20) this.buffer = Buffer.allocUnsafe(65536)
    return reader
  }
}

/** One column of a row description: its name and type oid. */
export interface Field {
  readonly name: string
  readonly typeOid: number
}

/** An ErrorResponse's fields, under the names PostgreSQL clients commonly use. */
export interface ErrorFields {
  readonly severity?: string
  readonly code?: string
  readonly message: string
  readonly detail?: string
  readonly hint?: string
  readonly schema?: string
  readonly table?: string
  readonly column?: string
  readonly constraint?: string
}

/** A database error reported by the backend; `code` is the SQLSTATE. */
export class DatabaseError extends Error {
  readonly severity: string | undefined
  readonly code: string | undefined
  readonly detail: string | undefined
  readonly hint: string | undefined
  readonly table: string | undefined
  readonly column: string | undefined
  readonly constraint: string | undefined
  constructor(fields: ErrorFields) {
    super(fields.message)
    this.name = "DatabaseError"
    this.severity = fields.severity
    this.code = fields.code
    this.detail = fields.detail
    this.hint = fields.hint
    this.table = fields.table
    this.column = fields.column
    this.constraint = fields.constraint
  }
}

const errorFieldNames: Record<number, keyof ErrorFields> = {
  83: "severity", // 'S'
  67: "code", // 'C'
  77: "message", // 'M'
  68: "detail", // 'D'
  72: "hint", // 'H'
  115: "schema", // 's'
  116: "table", // 't'
  99: "column", // 'c'
  110: "constraint" // 'n'
}

/** Backend message types, by their first byte. */
export const Message = {
  ParseComplete: 0x31,
  BindComplete: 0x32,
  CloseComplete: 0x33,
  CommandComplete: 0x43,
  DataRow: 0x44,
  ErrorResponse: 0x45,
  EmptyQueryResponse: 0x49,
  NoData: 0x6e,
  NoticeResponse: 0x4e,
  NotificationResponse: 0x41,
  ParameterDescription: 0x74,
  ParameterStatus: 0x53,
  PortalSuspended: 0x73,
  ReadyForQuery: 0x5a,
  RowDescription: 0x54
} as const

/** Walks the backend's messages in a buffer, one at a time. */
export class Reader {
  private readonly buffer: Buffer
  private readonly limit: number
  private next = 0
  /** The current message's type (see `Message`), and where its body starts and ends. */
  type = 0
  private position = 0
  private end = 0

  constructor(buffer: Buffer, limit: number) {
    this.buffer = buffer
    this.limit = limit
  }

  /** Moves to the next message; false when there is none. */
  advance(): boolean {
    if (this.next + 5 > this.limit) return false
    this.type = this.buffer[this.next]!
    const length = this.buffer.readInt32BE(this.next + 1)
    this.position = this.next + 5
    this.end = this.next + 1 + length
    this.next = this.end
    return true
  }

  private int16(): number {
    const value = this.buffer.readInt16BE(this.position)
    this.position += 2
    return value
  }

  private int32(): number {
    const value = this.buffer.readInt32BE(this.position)
    this.position += 4
    return value
  }

  private cstring(): string {
    const zero = this.buffer.indexOf(0, this.position)
    const end = zero === -1 || zero > this.end ? this.end : zero
    const value = this.buffer.toString("utf8", this.position, end)
    this.position = end + 1
    return value
  }

  /** ParameterDescription: the parameters' type oids. */
  parameterTypes(): Array<number> {
    const count = this.int16()
    const oids = new Array<number>(count)
    for (let i = 0; i < count; i++) oids[i] = this.int32()
    return oids
  }

  /** RowDescription: the columns' names and type oids. */
  fields(): Array<Field> {
    const count = this.int16()
    const fields = new Array<Field>(count)
    for (let i = 0; i < count; i++) {
      const name = this.cstring()
      this.position += 6 // table oid, column number
      const typeOid = this.int32()
      this.position += 8 // type size, type modifier, format
      fields[i] = { name, typeOid }
    }
    return fields
  }

  /** DataRow: each column's text, or null for SQL NULL. */
  values(): Array<string | null> {
    const count = this.int16()
    const values = new Array<string | null>(count)
    for (let i = 0; i < count; i++) {
      const length = this.int32()
      if (length === -1) {
        values[i] = null
      } else {
        values[i] = this.buffer.toString("utf8", this.position, this.position + length)
        this.position += length
      }
    }
    return values
  }

  /** CommandComplete: the command tag, e.g. "INSERT 0 1". */
  commandTag(): string {
    return this.cstring()
  }

  /** ErrorResponse / NoticeResponse: the fields the backend sent. */
  error(): DatabaseError {
    const fields: { -readonly [K in keyof ErrorFields]?: string } = {}
    while (this.position < this.end) {
      const code = this.buffer[this.position++]!
      if (code === 0) break
      const value = this.cstring()
      const name = errorFieldNames[code]
      if (name !== undefined) fields[name] = value
    }
    return new DatabaseError({ ...fields, message: fields.message ?? "unknown database error" })
  }

  /** ReadyForQuery: the transaction status, "I" (idle), "T" (in a transaction) or "E" (failed). */
  transactionStatus(): string {
    return String.fromCharCode(this.buffer[this.position]!)
  }
}
