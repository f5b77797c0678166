import { type ApiErrorBody, ApiError, NetworkError } from './client.js';

/**
 * One readable sentence for any failure, naming what the user can act on: the resource a 429
 * says ran out, the fields a 400 rejected, or that the server could not be reached.
 * `action` names what was attempted ("Stream", "Recording", "Loading streams").
 */
export function describeError(error: unknown, action: string): string {
  if (error instanceof NetworkError) {
    return `${action} failed: the Tally API could not be reached (${error.message}). Check that the server is running.`;
  }
  if (!(error instanceof ApiError)) {
    return `${action} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
  const body = error.body?.error;
  if (error.status === 429 && body) return describeRefusal(body, action);
  switch (error.status) {
    case 400:
      return `${action} failed: ${describeFields(body)}`;
    case 401:
      return 'Your key was not accepted (unknown or revoked): sign in again.';
    case 403:
      return `${action} needs the admin key: ${body?.message ?? 'forbidden'}.`;
    case 404:
      return error.routeMissing
        ? `${action} is not available on this server (${error.method} ${error.path} does not exist).`
        : `${action} failed: ${body?.message ?? 'not found'}.`;
    case 409:
      return `${action} failed: ${body?.message ?? 'conflict'}.`;
    default:
      break;
  }
  const id = error.body?.requestId;
  return `${action} failed (HTTP ${error.status}): ${body?.message ?? 'no details'}${id ? ` (request ${id})` : ''}.`;
}

type ErrorDetails = ApiErrorBody['error'];

const UNITS: Readonly<Record<string, string>> = {
  'node.ram': ' MB',
  'node.cpu': ' millicores',
  'node.nic': ' kbps',
  'node.nvenc': ' NVENC sessions',
  'node.disk': ' MB',
};

function describeRefusal(body: ErrorDetails, action: string): string {
  const resource = body.resource ?? 'a limit';
  const { used, limit, requested } = body;
  const retry = body.retryAfterS !== undefined ? ` Retry in ${body.retryAfterS} s.` : '';
  if (body.code === 'quota_exceeded' && resource === 'app.storage') {
    const numbers = used !== undefined && limit !== undefined ? ` (${used} MB of ${limit} MB held)` : '';
    return `${action} refused: the app's recordings fill its storage cap${numbers}. Delete recordings, or ask the operator to raise the cap.`;
  }
  if (body.code === 'quota_exceeded') {
    const numbers = used !== undefined && limit !== undefined ? ` (${used} of ${limit} in use)` : '';
    return `${action} refused: ${resource} is at its limit${numbers}. End something that uses it, or ask the operator to raise the limit.${retry}`;
  }
  if (resource === 'node.unavailable') {
    return `${action} refused: no node can take new work right now (every node is draining, disabled or not reporting).${retry}`;
  }
  const unit = UNITS[resource] ?? '';
  const numbers =
    used !== undefined && limit !== undefined
      ? ` (${used}${unit} of ${limit}${unit} in use${requested !== undefined ? `, ${requested}${unit} more needed` : ''})`
      : '';
  const node = body.nodeId ? ` on ${body.nodeId}` : '';
  return `${action} refused: the servers are out of ${resource}${node}${numbers}.${retry}`;
}

function describeFields(body: ErrorDetails | undefined): string {
  const fields = body?.details?.['fields'];
  if (Array.isArray(fields) && fields.length > 0) {
    return fields
      .map((f: unknown) => {
        const { field, message } = (f ?? {}) as { field?: unknown; message?: unknown };
        return `${typeof field === 'string' ? field : 'request'}: ${typeof message === 'string' ? message : 'invalid'}`;
      })
      .join('; ');
  }
  return body?.message ?? 'the request was invalid';
}

/** A 404 for an id (not a missing route): the resource does not exist in this app. */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && !error.routeMissing;
}

export function isRouteMissing(error: unknown): boolean {
  return error instanceof ApiError && error.routeMissing;
}

/** The message a 400 gave for `field` (its dotted path, e.g. `rateLimits.startsPerMinute`), to show beside that input. */
export function fieldError(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiError) || error.status !== 400) return undefined;
  const fields = error.body?.error.details?.['fields'];
  if (!Array.isArray(fields)) return undefined;
  for (const f of fields as unknown[]) {
    const { field: name, message } = (f ?? {}) as { field?: unknown; message?: unknown };
    if (name === field) return typeof message === 'string' ? message : 'invalid';
  }
  return undefined;
}
