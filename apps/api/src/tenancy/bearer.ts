/** The credential of an `Authorization: Bearer <credential>` header (scheme case-insensitive), or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
}
