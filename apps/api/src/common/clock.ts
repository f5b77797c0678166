// One clock for the API and the worker.
export { Clock } from '@tally/runtime';
