import type { LogLevel } from '@tally/config';
import { type DestinationStream, type Logger, pino } from 'pino';

/** The agent's log: JSON lines through pino (stdout unless a destination is given), as the API and the worker write theirs. */
export function agentLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return destination === undefined ? pino({ level }) : pino({ level }, destination);
}
