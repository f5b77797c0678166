// The baseline: a bare Fastify route on the same host, answering JSON without auth, validation or storage.
import Fastify from 'fastify';

const port = Number(process.argv[2]);
const app = Fastify({ logger: false });
app.post('/bare', (_request, reply) => reply.code(201).send({ ok: true }));
await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`listening on ${port}\n`);
