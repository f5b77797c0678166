import { z } from 'zod';

/**
 * No C0 control character (NUL, tab, newline, ESC, ...) and no DEL. PostgreSQL refuses NUL in
 * text (SQLSTATE 22021, which would surface as a 500), and none of them belongs in a name or a
 * URL, where it would corrupt logs, dashboards and file names downstream.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001F\u007F]*$/;
const MESSAGE = 'must not contain control characters';

/**
 * Every free-text field a request stores goes through this one schema: trimmed, 1..max
 * characters, no control characters. The refusal is a 400 naming the field.
 */
export function safeText(max: number): z.ZodString {
  return z.string().trim().min(1).max(max).regex(NO_CONTROL_CHARACTERS, MESSAGE);
}

/**
 * The same rule for strings whose own format is checked elsewhere (URLs, tokens). A URL keeps
 * `format: uri` in the OpenAPI document (a pattern would replace it there).
 */
export function withoutControlCharacters(schema: z.ZodString): z.ZodString;
export function withoutControlCharacters(schema: z.ZodURL): z.ZodURL;
export function withoutControlCharacters(schema: z.ZodString | z.ZodURL): z.ZodString | z.ZodURL {
  if (schema instanceof z.ZodURL) return schema.refine((value) => NO_CONTROL_CHARACTERS.test(value), MESSAGE);
  return schema.regex(NO_CONTROL_CHARACTERS, MESSAGE);
}
