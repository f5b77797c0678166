import type { RouteSpec } from './route-spec.js';

export const WEBHOOK_ROUTES: readonly RouteSpec[] = [];
