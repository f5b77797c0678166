// A tiny STUN server for tests: answers every RFC 5389 Binding Request on 127.0.0.1 (or HOST)
// with the sender's address (XOR-MAPPED-ADDRESS), so nothing ever asks a public STUN server.
// Usage: node stun-responder.mjs PORT [HOST]; prints "listening" once bound.
import { Buffer } from 'node:buffer';
import console from 'node:console';
import process from 'node:process';
import { createSocket } from 'node:dgram';

const MAGIC = 0x2112a442;
const [portArg, host = '127.0.0.1'] = process.argv.slice(2);
const socket = createSocket('udp4');
socket.on('message', (msg, from) => {
  if (msg.length < 20 || msg.readUInt16BE(0) !== 0x0001 || msg.readUInt32BE(4) !== MAGIC) return;
  const response = Buffer.alloc(32);
  response.writeUInt16BE(0x0101, 0);
  response.writeUInt16BE(12, 2);
  response.writeUInt32BE(MAGIC, 4);
  msg.copy(response, 8, 8, 20);
  response.writeUInt16BE(0x0020, 20); // XOR-MAPPED-ADDRESS
  response.writeUInt16BE(8, 22);
  response.writeUInt8(0x01, 25); // IPv4
  response.writeUInt16BE(from.port ^ (MAGIC >>> 16), 26);
  from.address.split('.').forEach((octet, i) => response.writeUInt8(Number(octet) ^ ((MAGIC >>> (24 - 8 * i)) & 0xff), 28 + i));
  socket.send(response, from.port, from.address);
});
socket.bind(Number(portArg), host, () => console.log('listening'));
