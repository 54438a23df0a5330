#!/usr/bin/env node
// Verifies a Baton audit export (GET /v1/audit/export) offline, with nothing but Node.
//
//   node scripts/verify-audit-export.mjs export.json [--key-id HEX]
//
// Checks, in order: every entry's seq (1, 2, 3, … without gap), prev_hash (the hash before it; the first one
// links to 64 zeros) and hash = SHA-256(prev_hash as its 64 hex characters ‖ canonical bytes), where the
// canonical bytes are the UTF-8 JSON of {action, actor, at, object, seq, summary} in exactly that key order,
// without whitespace; the head names the last entry; signed_message is exactly the text that commits to that
// head; the Ed25519 signature over signed_message verifies with the public key carried in the export; the key
// id is the SHA-256 of that key (SPKI DER) and, with --key-id, the one you pinned.
// Prints "OK: N entries, head <hash>, key <key_id>" and exits 0; otherwise prints what is wrong and exits 1.
import crypto from 'node:crypto';
import fs from 'node:fs';

const FORMAT = 'baton-audit-export/1';
const GENESIS = '0'.repeat(64);
const HEX64 = /^[0-9a-f]{64}$/;

function usage(message) {
  if (message) console.error(message);
  console.error('usage: node verify-audit-export.mjs <export.json> [--key-id HEX]');
  process.exit(1);
}

function fail(message) {
  console.error(`FAILED: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  let file;
  let keyId;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--key-id') {
      keyId = argv[++i];
      if (!keyId) usage('--key-id needs a value');
    } else if (a.startsWith('--key-id=')) {
      keyId = a.slice('--key-id='.length);
    } else if (a === '-h' || a === '--help') {
      usage();
    } else if (a.startsWith('-') && a !== '-') {
      usage(`unknown option ${a}`);
    } else if (file === undefined) {
      file = a;
    } else {
      usage(`unexpected argument ${a}`);
    }
  }
  if (file === undefined) usage('which export file?');
  return { file, keyId: keyId?.toLowerCase() };
}

/** The documented canonical form: these six keys in this order, JSON without whitespace, UTF-8. */
function canonicalBytes(e) {
  return Buffer.from(
    JSON.stringify({ action: e.action, actor: e.actor, at: e.at, object: e.object, seq: e.seq, summary: e.summary }),
    'utf8',
  );
}

function entryHash(prevHash, e) {
  return crypto.createHash('sha256').update(Buffer.from(prevHash, 'utf8')).update(canonicalBytes(e)).digest('hex');
}

function signedMessage(x) {
  return `${FORMAT}\nexported_at=${x.exported_at}\nentries=${x.entries.length}\nhead_seq=${x.head.seq}\nhead_hash=${x.head.hash}\n`;
}

const isString = (v) => typeof v === 'string';

function main() {
  const { file, keyId: pinned } = parseArgs(process.argv.slice(2));
  let text;
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    fail(`cannot read ${file}: ${err.message}`);
  }
  let x;
  try {
    x = JSON.parse(text);
  } catch (err) {
    fail(`not JSON: ${err.message}`);
  }
  if (x === null || typeof x !== 'object') fail('not an audit export object');
  if (x.format !== FORMAT) fail(`format is ${JSON.stringify(x.format)}, expected ${FORMAT}`);
  if (!Array.isArray(x.entries)) fail('entries is not an array');
  if (!x.head || !Number.isInteger(x.head.seq) || !isString(x.head.hash)) fail('head is missing or malformed');
  for (const k of ['exported_at', 'key_id', 'public_key', 'signed_message', 'signature'])
    if (!isString(x[k])) fail(`${k} is missing or not a string`);

  // 1. The chain.
  let prev = GENESIS;
  for (const [i, e] of x.entries.entries()) {
    const want = i + 1;
    if (e === null || typeof e !== 'object') fail(`entry #${want} is not an object`);
    if (e.seq !== want)
      fail(
        `entry #${want} has seq ${JSON.stringify(e.seq)}: an entry is missing, duplicated or out of order at seq ${want}`,
      );
    for (const k of ['at', 'actor', 'action', 'summary', 'prev_hash', 'hash'])
      if (!isString(e[k])) fail(`entry seq ${want}: ${k} is missing or not a string`);
    if (e.object !== null && !isString(e.object)) fail(`entry seq ${want}: object is neither a string nor null`);
    if (e.prev_hash !== prev)
      fail(`entry seq ${want}: prev_hash does not match the hash of entry ${want - 1} (chain broken at seq ${want})`);
    const h = entryHash(prev, e);
    if (e.hash !== h) fail(`entry seq ${want}: hash does not match its content (entry altered at seq ${want})`);
    prev = h;
  }

  // 2. The head names the last entry.
  if (x.head.seq !== x.entries.length)
    fail(`head.seq is ${x.head.seq} but the export holds ${x.entries.length} entries`);
  if (!HEX64.test(x.head.hash) || x.head.hash !== prev)
    fail(`head.hash ${x.head.hash} is not the hash of the last entry (${prev})`);

  // 3. The signed text commits to exactly this head.
  if (x.signed_message !== signedMessage(x))
    fail('signed_message does not match exported_at, the entry count and the head of this export');

  // 4. The key.
  let publicKey;
  try {
    publicKey = crypto.createPublicKey(x.public_key);
  } catch (err) {
    fail(`public_key is not a PEM public key: ${err.message}`);
  }
  if (publicKey.asymmetricKeyType !== 'ed25519') fail(`public_key is ${publicKey.asymmetricKeyType}, not Ed25519`);
  const keyId = crypto
    .createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex');
  if (x.key_id.toLowerCase() !== keyId) fail(`key_id ${x.key_id} is not the fingerprint of public_key (${keyId})`);
  if (pinned !== undefined && pinned !== keyId) fail(`signed with key ${keyId}, not the pinned key ${pinned}`);

  // 5. The signature.
  const signature = Buffer.from(x.signature, 'base64');
  if (signature.length !== 64 || signature.toString('base64') !== x.signature)
    fail('signature is not a base64 Ed25519 signature (64 bytes)');
  if (!crypto.verify(null, Buffer.from(x.signed_message, 'utf8'), publicKey, signature))
    fail('the Ed25519 signature does not verify: signed_message or signature was altered');

  console.log(`OK: ${x.entries.length} entries, head ${x.head.hash}, key ${keyId}`);
}

main();
