import type { EmbeddingProvider } from "@switchyard/core"

export interface Inline {
  readonly mimeType: string
  readonly data: string
}

export type Kind = "image" | "audio" | "video" | "file"

const dataUrlPattern = /^data:([^;,]+)((?:;[^;,]*)*);base64,(.*)$/su

export const parseDataUrl = (url: string): Inline | undefined => {
  const match = dataUrlPattern.exec(url)
  return match ? { mimeType: match[1]!.toLowerCase(), data: match[3]! } : undefined
}

export const isHttpUrl = (url: string): boolean => /^https?:\/\//iu.test(url)

export const toDataUrl = (inline: Inline): string => `data:${inline.mimeType};base64,${inline.data}`

const mimeTypes: Record<Kind, Record<string, string>> = {
  image: { png: "image/png", jpeg: "image/jpeg", jpg: "image/jpeg", webp: "image/webp", gif: "image/gif", heic: "image/heic", heif: "image/heif" },
  audio: {
    wav: "audio/wav",
    mp3: "audio/mpeg",
    mpeg: "audio/mpeg",
    flac: "audio/flac",
    ogg: "audio/ogg",
    aac: "audio/aac",
    m4a: "audio/mp4",
    opus: "audio/opus",
    aiff: "audio/aiff",
    webm: "audio/webm"
  },
  video: {
    mp4: "video/mp4",
    mpeg: "video/mpeg",
    mov: "video/quicktime",
    avi: "video/x-msvideo",
    webm: "video/webm",
    wmv: "video/x-ms-wmv",
    flv: "video/x-flv",
    "3gp": "video/3gpp",
    mkv: "video/x-matroska"
  },
  file: {
    pdf: "application/pdf",
    txt: "text/plain",
    html: "text/html",
    csv: "text/csv",
    md: "text/markdown",
    json: "application/json"
  }
}

const mimeTypeOf = (kind: Kind, format: string | undefined): string | undefined => {
  if (format === undefined) return undefined
  const label = format.trim().toLowerCase()
  if (label.includes("/")) return label
  return mimeTypes[kind][label]
}

// A media payload is a data: URL, or bare base64 whose type comes from `format`.
export const inline = (kind: Kind, media: EmbeddingProvider.Media): Inline | undefined => {
  const fromUrl = parseDataUrl(media.data)
  if (fromUrl !== undefined) return fromUrl
  if (isHttpUrl(media.data)) return undefined
  const mimeType = mimeTypeOf(kind, media.format)
  return mimeType === undefined ? undefined : { mimeType, data: media.data }
}

export const partKind = (part: EmbeddingProvider.ContentPart): Kind | "text" => {
  switch (part.type) {
    case "text":
      return "text"
    case "image_url":
      return "image"
    case "input_audio":
      return "audio"
    case "input_video":
      return "video"
    case "input_file":
      return "file"
  }
}
