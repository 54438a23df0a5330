import { describe, expect, it } from '@jest/globals';
import { parseIpAddress, refusedAddressReason, refusedHostReason } from './refused-address.js';

describe('refusedAddressReason', () => {
  it.each<[string, string]>([
    ['169.254.169.254', 'link-local'],
    ['169.254.1.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['100.100.100.200', 'metadata'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['FE80::1', 'link-local'],
    ['fd00:ec2::254', 'metadata'],
    ['::', 'unspecified'],
    ['0:0:0:0:0:0:0:0', 'unspecified'],
    // IPv4-mapped, dotted and hex
    ['::ffff:169.254.169.254', 'IPv4-mapped address for 169.254.169.254'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped address for 169.254.169.254'],
    ['[::ffff:a9fe:a9fe]', 'IPv4-mapped address for 169.254.169.254'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'IPv4-mapped address for 169.254.169.254'],
    ['::ffff:0.0.0.0', 'IPv4-mapped address for 0.0.0.0'],
    ['::ffff:100.100.100.200', 'metadata'],
    // IPv4-translated (SIIT) and IPv4-compatible
    ['::ffff:0:a9fe:a9fe', 'IPv4-translated address for 169.254.169.254'],
    ['::169.254.169.254', 'IPv4-compatible address for 169.254.169.254'],
    ['::a9fe:a9fe', 'IPv4-compatible address for 169.254.169.254'],
    // NAT64: the well-known prefix and the local-use /48 with each prefix length of RFC 6052
    ['64:ff9b::a9fe:a9fe', 'NAT64 address for 169.254.169.254'],
    ['64:ff9b::169.254.169.254', 'NAT64 address for 169.254.169.254'],
    ['64:ff9b::6464:64c8', 'NAT64 address for 100.100.100.200'],
    ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64 address for 169.254.169.254'], // /96
    ['64:ff9b:1:0:a9:fea9:fe00:0', 'local-use NAT64 address for 169.254.169.254'], // /64
    ['64:ff9b:1:a9:fe:a9fe:0:0', 'local-use NAT64 address for 169.254.169.254'], // /56
    ['64:ff9b:1:a9fe:a9:fe00::', 'local-use NAT64 address for 169.254.169.254'], // /48
    // 6to4
    ['2002:a9fe:a9fe::1', '6to4 address for 169.254.169.254'],
    ['2002:0:1::', '6to4 address for 0.0.0.1'],
  ])('refuses %s (%s)', (address, words) => {
    expect(refusedAddressReason(address)).toContain(words);
  });

  // Loopback and private networks stay allowed: a CMDB beside Baton is the common case.
  it.each([
    '127.0.0.1',
    '10.0.0.5',
    '192.168.1.10',
    '172.16.0.1',
    '8.8.8.8',
    '169.253.255.255',
    '169.255.0.0',
    '100.100.100.201',
    '1.0.0.0',
    '::1',
    '2001:db8::1',
    'fec0::1',
    'fd00:ec2::253',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a00:1',
    '64:ff9b::a00:1',
    '64:ff9b::7f00:1',
    '64:ff9b:2::a9fe:a9fe',
    '64:ff9b:1::a00:1',
    '64:ff9b:1:a00:0:100::',
    '64:ff9b:1:ab:cd00:0:a00:1',
    '2002:a00:1::',
    '2003:a9fe:a9fe::',
    'ff02::1',
  ])('allows %s', (address) => {
    expect(refusedAddressReason(address)).toBeUndefined();
  });

  it.each([
    '',
    'localhost',
    'example.com',
    '169.254.169.254.1',
    '169.254.169',
    '0x7f.0.0.1',
    '010.0.0.1',
    '1.2.3.256',
    ':::',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '12345::',
    'g::1',
    '::ffff:1.2.3',
    'A'.repeat(100_000),
  ])('refuses %j: not an IP address (DNS must answer addresses)', (text) => {
    expect(refusedAddressReason(text)).toContain('not an IP address');
  });
});

describe('parseIpAddress', () => {
  it.each<[string, 4 | 6, number[]]>([
    ['1.2.3.4', 4, [1, 2, 3, 4]],
    ['::1', 6, [...new Array<number>(15).fill(0), 1]],
    ['1::', 6, [0, 1, ...new Array<number>(14).fill(0)]],
    ['1:2:3:4:5:6:7:8', 6, [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]],
    ['::ffff:1.2.3.4', 6, [...new Array<number>(10).fill(0), 0xff, 0xff, 1, 2, 3, 4]],
  ])('reads %s', (text, family, bytes) => {
    expect(parseIpAddress(text)).toEqual({ family, bytes });
  });
});

describe('refusedHostReason (a URL host before DNS)', () => {
  it.each([
    ['metadata.google.internal', 'metadata service'],
    ['METADATA.google.internal.', 'metadata service'],
    ['metadata', 'metadata service'],
    ['instance-data.ec2.internal', 'metadata service'],
    ['169.254.169.254', 'link-local'],
    ['[::ffff:a9fe:a9fe]', 'IPv4-mapped'],
    ['[64:ff9b::a9fe:a9fe]', 'NAT64'],
    ['[2002:a9fe:a9fe::]', '6to4'],
  ])('refuses %s', (host, words) => {
    expect(refusedHostReason(host)).toContain(words);
  });

  it.each(['cmdb.example.com', 'localhost', '127.0.0.1', '[::1]', 'metadata.example.com'])(
    'leaves %s to the check after DNS',
    (host) => {
      expect(refusedHostReason(host)).toBeUndefined();
    },
  );
});
