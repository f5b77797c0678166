import { describe, expect, it } from 'vitest';
import { CreateAppBody, UpdateAppBody } from './apps.js';
import { CreateCameraBody } from './cameras.js';
import { JoinNodeBody } from './cluster.js';
import { CreateStreamBody, CreateTokenBody } from './streams.js';
import { safeText } from './text.js';

/** The path and message of each issue, as the API's 400 names them. */
function refusal(result: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) {
  expect(result.success).toBe(false);
  return result.error?.issues.map((i) => ({ field: i.path.join('.'), message: i.message }));
}

describe(safeText.name, () => {
  const controls = ['\u0000', 'a\u0000b', 'line\nbreak', 'tab\there', 'esc\u001b[31m', 'del\u007f'];

  it.each(controls)('refuses %j in every stored name, naming the field', (value) => {
    const expected = [{ field: 'name', message: 'must not contain control characters' }];
    expect(refusal(CreateAppBody.safeParse({ name: value }))).toEqual(expected);
    expect(refusal(UpdateAppBody.safeParse({ name: value }))).toEqual(expected);
    expect(refusal(CreateStreamBody.safeParse({ name: value }))).toEqual(expected);
    expect(refusal(CreateCameraBody.safeParse({ name: value }))).toEqual(expected);
    expect(refusal(CreateTokenBody.safeParse({ identity: 'viewer-1', role: 'viewer', name: value }))).toEqual(expected);
  });

  it('refuses control characters in a webhook URL and a join token', () => {
    expect(refusal(UpdateAppBody.safeParse({ webhookUrl: 'https://example.test/a\u0000b' }))).toEqual([
      { field: 'webhookUrl', message: 'must not contain control characters' },
    ]);
    expect(refusal(JoinNodeBody.safeParse({ token: 'tok\u0000', name: 'n1', role: 'media' }))).toEqual([
      { field: 'token', message: 'must not contain control characters' },
    ]);
  });

  it('keeps any other text, trimmed', () => {
    expect(CreateAppBody.parse({ name: '  Café 🎥 — «live» ' })).toEqual({ name: 'Café 🎥 — «live»' });
    expect(CreateStreamBody.parse({ name: '日本語の配信' })).toEqual({ name: '日本語の配信' });
  });

  it('still refuses blank and over-long names', () => {
    expect(CreateAppBody.safeParse({ name: '   ' }).success).toBe(false);
    expect(CreateAppBody.safeParse({ name: 'x'.repeat(101) }).success).toBe(false);
  });
});
