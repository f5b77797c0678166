// An HTTP proxy that reaches the package registries and nothing else, for an install running in a
// network namespace with no route out (scripts/fresh-host.int.sh): HTTPS through CONNECT (npm, the
// Go module proxy) and plain-HTTP GETs with an absolute URL (apt). Hosts outside the list get 403.
//   node registry-proxy.mjs ADDRESS PORT HOST...
// Prints "listening" once it accepts connections.
import console from 'node:console';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import process from 'node:process';
import { URL } from 'node:url';

const [address, port, ...allowed] = process.argv.slice(2);
const permitted = (host) => allowed.includes(host);

const server = createServer((req, res) => {
  let target;
  try {
    target = new URL(req.url);
  } catch {
    res.writeHead(400).end();
    return;
  }
  if (target.protocol !== 'http:' || !permitted(target.hostname)) {
    res.writeHead(403).end(`not a registry: ${target.hostname}\n`);
    return;
  }
  const upstream = request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});

server.on('connect', (req, socket, head) => {
  const [host, targetPort] = (req.url ?? '').split(':');
  if (!permitted(host) || targetPort !== '443') {
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    return;
  }
  const upstream = connect(443, host, () => {
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  upstream.on('error', () => socket.destroy());
  socket.on('error', () => upstream.destroy());
});

server.listen(Number(port), address, () => console.log('listening'));
