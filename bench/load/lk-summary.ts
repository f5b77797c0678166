/** The totals row of `lk load-test`'s subscriber summary: tracks subscribed of expected, and the total bitrate. */
export type LkSummary = Readonly<{ subscribed: number; expected: number; bitrate: string }>;

export function parseLkSummary(output: string): LkSummary | undefined {
  const match = /│\s*Total\s*│\s*(\d+)\/(\d+)\s*│\s*([^│(]+?)\s*(?:\(|│)/.exec(output);
  if (!match) return undefined;
  return { subscribed: Number(match[1]), expected: Number(match[2]), bitrate: match[3] ?? '' };
}
