import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StunAttr, StunMethod, decodeMessage, encodeRequest, readXorAddress, xorAddress } from './turn-client.js';

describe('the TURN client messages', () => {
  it('encodes an Allocate request as type 0x0003 with the magic cookie and padded attributes', () => {
    const bytes = encodeRequest(StunMethod.allocate, [[StunAttr.username, Buffer.from('abcde')]]);
    expect(bytes.readUInt16BE(0)).toBe(0x0003);
    expect(bytes.readUInt32BE(4)).toBe(0x2112a442);
    // one attribute: 4 bytes of header + 5 bytes padded to 8
    expect(bytes.readUInt16BE(2)).toBe(12);
    const message = decodeMessage(bytes);
    expect(message).toMatchObject({ method: StunMethod.allocate, cls: 0 });
    expect(message.attributes.get(StunAttr.username)?.toString()).toBe('abcde');
  });

  it('closes an authenticated request with an HMAC-SHA1 of everything before it, length included', () => {
    const key = Buffer.from('0123456789abcdef');
    const bytes = encodeRequest(StunMethod.createPermission, [[StunAttr.nonce, Buffer.from('n')]], key);
    expect(bytes.readUInt16BE(0)).toBe(0x0008);
    const integrityAt = bytes.length - 24;
    expect(bytes.readUInt16BE(integrityAt)).toBe(StunAttr.messageIntegrity);
    expect(bytes.readUInt16BE(2)).toBe(bytes.length - 20);
    const expected = createHmac('sha1', key).update(bytes.subarray(0, integrityAt)).digest();
    expect(bytes.subarray(integrityAt + 4)).toEqual(expected);
  });

  it('reads success and error responses: class and method from the type bits, the error code', () => {
    const success = encodeRequest(StunMethod.allocate, []);
    success.writeUInt16BE(0x0103, 0);
    expect(decodeMessage(success)).toMatchObject({ method: StunMethod.allocate, cls: 2 });

    const reason = Buffer.from('Forbidden IP');
    const errorValue = Buffer.concat([Buffer.from([0, 0, 4, 3]), reason]);
    const error = encodeRequest(StunMethod.createPermission, [[StunAttr.errorCode, errorValue]]);
    error.writeUInt16BE(0x0118, 0);
    const decoded = decodeMessage(error);
    expect(decoded).toMatchObject({ method: StunMethod.createPermission, cls: 3 });
    expect(decoded.attributes.get(StunAttr.errorCode)?.readUInt8(2)).toBe(4);
  });

  it('XORs addresses with the magic cookie both ways', () => {
    const value = xorAddress('10.234.0.1', 50000);
    expect(value.readUInt16BE(2)).toBe(50000 ^ 0x2112);
    expect(readXorAddress(value)).toBe('10.234.0.1:50000');
    expect(() => xorAddress('10.234.0', 1)).toThrow('not an IPv4 address');
  });
});
