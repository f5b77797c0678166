// The baselines, in one process beside the API: a bare Fastify route answering JSON without auth,
// validation or storage, and the floor of a token mint: the same Fastify, the key compared with one
// string, the request body validated by the API's own schema, the join token signed by the API's
// own signer and the same answer, with none of the API's hooks, caches, limits or metrics; once
// answering at once, once with the answers of a loop turn written together.
import { randomBytes } from 'node:crypto';
import { CreateTokenBody } from '@tally/contracts';
import { JoinTokenSigner } from '@tally/livekit';
import Fastify, { type FastifyRequest } from 'fastify';
// The API's own wait for the end of a loop turn, as its hot routes use it (a module without imports).
import { endOfTurn } from '../../apps/api/src/common/end-of-turn.js';
import { BARE_KEY } from './scenarios.js';

type MintRequest = FastifyRequest<{ Params: { streamId: string } }>;

const port = Number(process.argv[2]);
const signer = new JoinTokenSigner({ apiKey: 'APIbare', apiSecret: randomBytes(32).toString('base64url') });
const app = Fastify({ logger: false });

function mint(request: MintRequest): { status: number; answer: object } {
  if (request.headers.authorization !== `Bearer ${BARE_KEY}`) return { status: 401, answer: { error: 'unauthorized' } };
  const parsed = CreateTokenBody.safeParse(request.body);
  if (!parsed.success) return { status: 400, answer: { error: parsed.error.message } };
  const body = parsed.data;
  const now = Date.now();
  const token = signer.sign(
    {
      room: request.params.streamId,
      identity: body.identity,
      name: body.name,
      canPublish: body.role === 'publisher',
      ttlSeconds: body.ttlSeconds,
    },
    now,
  );
  const expiresAt = new Date(now + body.ttlSeconds * 1000).toISOString();
  return { status: 201, answer: { token, url: 'ws://127.0.0.1:7880', identity: body.identity, role: body.role, expiresAt } };
}

app.post('/bare', (_request, reply) => reply.code(201).send({ ok: true }));
app.post('/bare/streams/:streamId/tokens', (request: MintRequest, reply) => {
  const { status, answer } = mint(request);
  return reply.code(status).send(answer);
});
app.post('/bare/batched/streams/:streamId/tokens', async (request: MintRequest, reply) => {
  const { status, answer } = mint(request);
  await endOfTurn();
  return reply.code(status).send(answer);
});
await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`listening on ${port}\n`);
