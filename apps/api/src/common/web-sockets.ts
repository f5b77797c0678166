import fastifyWebsocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';

/** Above the largest maxFrameKb a camera may have, so an oversize frame gets Tally's close code, not ws's 1009. */
const MAX_PAYLOAD = 4 * 1024 * 1024;

/**
 * @fastify/websocket: an upgrade request runs through Fastify's router and hooks like any request,
 * and only a route declared `websocket: true` upgrades it (the cameras' routes).
 */
export async function registerWebSockets(fastify: FastifyInstance): Promise<void> {
  await fastify.register(fastifyWebsocket, { options: { maxPayload: MAX_PAYLOAD, perMessageDeflate: false } });
}
