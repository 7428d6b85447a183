export type Purpose =
  | "query"
  | "document"
  | "similarity"
  | "classification"
  | "clustering"
  | "question_answering"
  | "fact_verification"
  | "code_query"
  | "code_document"

const synonyms: Record<string, Purpose> = {
  query: "query",
  search_query: "query",
  retrieval_query: "query",
  document: "document",
  search_document: "document",
  retrieval_document: "document",
  passage: "document",
  retrieval_passage: "document",
  similarity: "similarity",
  semantic_similarity: "similarity",
  text_matching: "similarity",
  classification: "classification",
  clustering: "clustering",
  separation: "clustering",
  question_answering: "question_answering",
  fact_verification: "fact_verification",
  code_query: "code_query",
  code_retrieval_query: "code_query",
  code_passage: "code_document",
  code_document: "code_document"
}

// `input_type` is free-form; each provider names the same purposes differently.
export const purposeOf = (inputType: string | undefined): Purpose | undefined =>
  inputType === undefined ? undefined : synonyms[inputType.trim().toLowerCase().replace(/[.\- ]/gu, "_")]
