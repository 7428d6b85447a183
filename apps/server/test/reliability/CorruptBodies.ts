import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"

/**
 * What a well-behaved OpenAI-compatible upstream answers for `input`, as the fake computes it.
 */
export const normalBody = (upstreamModel: string, input: unknown, encoding: "float" | "base64" = "float"): any =>
  FakeOpenAi.api().handle(
    {
      method: "POST",
      path: "/v1/embeddings",
      headers: { authorization: "Bearer sk-fake" },
      raw: "",
      body: { model: upstreamModel, input, ...(encoding === "base64" ? { encoding_format: "base64" } : {}) }
    },
    {}
  ).body

const float32 = (values: ReadonlyArray<number>) => {
  const bytes = Buffer.alloc(values.length * 4)
  values.forEach((v, i) => {
    bytes.writeFloatLE(v, i * 4)
  })
  return bytes.toString("base64")
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

/**
 * 200 answers that are not embeddings: each is the raw text an upstream sends for a request of
 * two or more inputs, and each must end in a fallback or a 502, never in a 200 that passes it on.
 * `base64` marks the ones that only matter when the client asked for base64.
 */
export const corruptions: ReadonlyArray<{
  readonly name: string
  readonly base64?: boolean
  readonly body: (normal: any) => string
}> = [
  { name: "a value beyond float64 (1e999 parses as Infinity)", body: (n) => JSON.stringify(n).replace(/(\[)-?0\.\d+/u, "$11e999") },
  { name: "null inside a vector", body: (n) => JSON.stringify(n).replace(/(\[)-?0\.\d+/u, "$1null") },
  { name: "a string inside a vector", body: (n) => JSON.stringify(n).replace(/(\[)(-?0\.\d+)/u, "$1\"$2\"") },
  { name: "an array inside a vector", body: (n) => JSON.stringify(n).replace(/(\[)(-?0\.\d+)/u, "$1[$2]") },
  { name: "an empty vector", body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any, i: number) => (i === 0 ? { ...d, embedding: [] } : d)) }) },
  {
    name: "vectors of two widths",
    body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any, i: number) => (i === 0 ? { ...d, embedding: d.embedding.slice(1) } : d)) })
  },
  { name: "every vector one value short", body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any) => ({ ...d, embedding: d.embedding.slice(1) })) }) },
  { name: "a duplicated index", body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any) => ({ ...d, index: 0 })) }) },
  { name: "an index out of range", body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any, i: number) => ({ ...d, index: i + 7 })) }) },
  { name: "a negative index", body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any, i: number) => ({ ...d, index: i - 1 })) }) },
  { name: "a fractional index", body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any, i: number) => ({ ...d, index: i + 0.5 })) }) },
  { name: "an index as a string", body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any, i: number) => ({ ...d, index: String(i) })) }) },
  { name: "one vector too many", body: (n) => JSON.stringify({ ...n, data: [...n.data, { ...n.data[0], index: n.data.length }] }) },
  { name: "data as an object", body: (n) => JSON.stringify({ ...n, data: { ...n.data } }) },
  { name: "no data", body: (n) => JSON.stringify({ ...n, data: undefined }) },
  { name: "an embedding as an object", body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any) => ({ ...d, embedding: { ...d.embedding } })) }) },
  { name: "negative prompt tokens", body: (n) => JSON.stringify({ ...n, usage: { prompt_tokens: -5, total_tokens: -5 } }) },
  { name: "fractional prompt tokens", body: (n) => JSON.stringify({ ...n, usage: { prompt_tokens: 1.5, total_tokens: 1.5 } }) },
  { name: "astronomical prompt tokens", body: (n) => JSON.stringify({ ...n, usage: { prompt_tokens: 1e300, total_tokens: 1e300 } }) },
  { name: "prompt tokens as a string", body: (n) => JSON.stringify({ ...n, usage: { prompt_tokens: "7", total_tokens: "7" } }) },
  { name: "JSON null", body: () => "null" },
  { name: "a JSON array", body: () => "[]" },
  { name: "a JSON string", body: () => "\"embeddings\"" },
  { name: "an HTML page", body: () => "<html><body>Bad gateway</body></html>" },
  { name: "an empty body", body: () => "" },
  { name: "data nested 100000 deep", body: () => `{"object":"list","data":${nested(100_000)}}` },
  {
    name: "base64 whose length is not whole float32s",
    body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any) => ({ ...d, embedding: Buffer.alloc(6).toString("base64") })) })
  },
  {
    name: "base64 with characters outside the alphabet",
    body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any) => ({ ...d, embedding: "!!!!".repeat(d.embedding.length ?? 16) })) })
  },
  {
    name: "base64 of NaN floats",
    body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any) => ({ ...d, embedding: float32(Array.from({ length: 16 }, () => Number.NaN)) })) })
  },
  {
    name: "base64 of infinite floats",
    base64: true,
    body: (n) =>
      JSON.stringify({ ...n, data: n.data.map((d: any) => ({ ...d, embedding: float32(Array.from({ length: 16 }, (_, i) => (i === 3 ? Infinity : 0.25))) })) })
  },
  {
    name: "base64 of NaN floats, forwarded as base64",
    base64: true,
    body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any) => ({ ...d, embedding: float32(Array.from({ length: 16 }, () => Number.NaN)) })) })
  },
  {
    name: "floats beyond float32 when base64 was asked for",
    base64: true,
    body: (n) => JSON.stringify({ ...n, data: n.data.map((d: any) => ({ ...d, embedding: FakeUpstream.vectorFor("x", 16).map((v, i) => (i === 0 ? 1e39 : v)) })) })
  }
]
