import fastifyWebsocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';

/** The largest maxFrameKb a camera may have; each connection then gets its own, smaller cap (message-limit.ts). */
const MAX_PAYLOAD = 2_048 * 1024;

/**
 * @fastify/websocket: an upgrade request runs through Fastify's router and hooks like any request,
 * and only a route declared `websocket: true` upgrades it (the cameras' routes).
 */
export async function registerWebSockets(fastify: FastifyInstance): Promise<void> {
  await fastify.register(fastifyWebsocket, { options: { maxPayload: MAX_PAYLOAD, perMessageDeflate: false } });
}
