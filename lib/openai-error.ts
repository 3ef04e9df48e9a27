/** The error body OpenAI clients parse: `{"error":{"message","type","param","code"}}`. */
export interface OpenAiErrorBody {
  readonly error: {
    readonly message: string;
    readonly type: string;
    readonly param: string | null;
    readonly code: string | null;
  };
}

export function openAiError(
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): OpenAiErrorBody {
  return { error: { message, type, param, code } };
}
