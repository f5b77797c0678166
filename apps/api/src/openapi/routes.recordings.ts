import type { RouteSpec } from './route-spec.js';

export const RECORDING_ROUTES: readonly RouteSpec[] = [];
