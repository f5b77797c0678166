import type { Browser } from 'playwright-core';

export type Series = Readonly<{ name: string; points: readonly (readonly [number, number])[] }>;

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const escape = (s: string) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c] ?? c);

/** A line chart as SVG: one polyline per series, axes from 0 to the largest value. */
export function lineChartSvg(title: string, xLabel: string, yLabel: string, series: readonly Series[]): string {
  const [W, H, L, R, T, B] = [800, 480, 70, 180, 40, 50];
  const all = series.flatMap((s) => s.points);
  const xMax = Math.max(1, ...all.map((p) => p[0]));
  const yMax = Math.max(1, ...all.map((p) => p[1]));
  const x = (v: number) => L + (v / xMax) * (W - L - R);
  const y = (v: number) => H - B - (v / yMax) * (H - T - B);
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${escape(title)}</text>`,
    ...ticks.map((t) => `<line x1="${L}" x2="${W - R}" y1="${y(t * yMax)}" y2="${y(t * yMax)}" stroke="#ddd"/>`),
    ...ticks.map((t) => `<text x="${L - 6}" y="${y(t * yMax) + 4}" text-anchor="end">${+(t * yMax).toPrecision(3)}</text>`),
    ...ticks.map((t) => `<text x="${x(t * xMax)}" y="${H - B + 16}" text-anchor="middle">${+(t * xMax).toPrecision(3)}</text>`),
    `<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#000"/><line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#000"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">${escape(xLabel)}</text>`,
    `<text transform="translate(16 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${escape(yLabel)}</text>`,
    ...series.map((s, i) => {
      const color = COLORS[i % COLORS.length] ?? '#000';
      const pts = s.points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
      return `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts}"/><text x="${W - R + 10}" y="${T + 16 + i * 18}" fill="${color}">${escape(s.name)}</text>`;
    }),
    '</svg>',
  ].join('\n');
}

/** Renders an SVG to a PNG file with headless Chromium. */
export async function writePng(browser: Browser, svg: string, path: string): Promise<void> {
  const page = await browser.newPage({ viewport: { width: 800, height: 480 } });
  try {
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    await page.locator('svg').screenshot({ path });
  } finally {
    await page.close();
  }
}
