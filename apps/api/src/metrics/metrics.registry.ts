import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { DEFAULT_METRICS_PREFIX } from './metric-names.js';

/**
 * One prom-client registry per API instance (not the global one, so several instances in one
 * process, as in tests, do not collide). Collectors register their metrics here.
 */
@Injectable()
export class MetricsRegistry {
  readonly registry = new Registry();
  private generation = 0;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: DEFAULT_METRICS_PREFIX });
  }

  /** The text exposition; every gauge is computed by its collect callback during this call. */
  async render(): Promise<Readonly<{ contentType: string; body: string }>> {
    this.generation += 1;
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /**
   * Several gauges read the same data (one Postgres query, one quota derivation): `load` runs at
   * most once per scrape, and the gauges of that scrape share its result.
   */
  perScrape<T>(load: () => Promise<T>): () => Promise<T> {
    let cached: Readonly<{ generation: number; value: Promise<T> }> | undefined;
    return () => {
      if (cached?.generation !== this.generation) cached = { generation: this.generation, value: load() };
      return cached.value;
    };
  }
}
