// bench/sse's subscribers, forked by sse.bench.mjs: `count` raw TCP clients of one run's event stream in this
// process. A client does the least it can while events flow (one timestamp and one Buffer kept per chunk; no HTTP
// parser, no decoding, no JSON) and parses everything once the stream has ended, so the figure is as much the
// server's delivery and as little this process's queue as a client on the same two cores can make it.
// Messages: parent → {type: 'open', url, token, runId, count}, later {type: 'measure', since};
// child → {type: 'opened'} once every client has its response headers, {type: 'failed', message}, and
// {type: 'result', delays, complete, incomplete, events} after every stream ended and `measure` came.
import net from 'node:net';

const HEADERS_END = Buffer.from('\r\n\r\n');
const FRAME_END = Buffer.from('\n\n');

/** One subscriber: resolves with the body's chunks and their arrival times once the server closes the stream. */
function subscribe(url, token, runId, onHeaders) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks = [];
    const times = [];
    let head = Buffer.alloc(0);
    let headersDone = false;
    socket.on('connect', () =>
      socket.write(
        `GET /v1/runs/${runId}/stream HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n` +
          'Accept: text/event-stream\r\nConnection: close\r\n\r\n',
      ),
    );
    socket.on('data', (chunk) => {
      if (headersDone) {
        chunks.push(chunk);
        times.push(Date.now());
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(HEADERS_END);
      if (end < 0) return;
      const status = head.subarray(0, head.indexOf('\r\n')).toString();
      if (!/^HTTP\/1\.1 200 /.test(status)) {
        socket.destroy();
        reject(
          new Error(
            `stream answered ${status}: ${head
              .subarray(end + 4)
              .toString()
              .slice(0, 200)}`,
          ),
        );
        return;
      }
      headersDone = true;
      if (head.length > end + 4) {
        chunks.push(head.subarray(end + 4));
        times.push(Date.now());
      }
      onHeaders();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ chunks, times }));
  });
}

/** The stream's frames with the arrival time of the chunk that completed each. */
function framesOf({ chunks, times }) {
  const body = Buffer.concat(chunks);
  const ends = [];
  let offset = 0;
  for (const c of chunks) ends.push((offset += c.length));
  const frames = [];
  let chunk = 0;
  let start = 0;
  for (let cut = body.indexOf(FRAME_END); cut >= 0; cut = body.indexOf(FRAME_END, start)) {
    while (ends[chunk] < cut + 2) chunk += 1;
    frames.push({ text: body.subarray(start, cut).toString('utf8'), receivedAt: times[chunk] });
    start = cut + 2;
  }
  return frames;
}

/** Live delays (event ts after `since`) of one stream, and whether it held seq 1..n and then `event: end`. */
function measureStream(stream, since) {
  const delays = [];
  let expectedSeq = 1;
  let ended = false;
  let gap = false;
  let lastStatus;
  for (const frame of framesOf(stream)) {
    let seq;
    let kind = 'message';
    let data = '';
    for (const line of frame.text.split('\n')) {
      if (line.startsWith('id:')) seq = Number(line.slice(3).trim());
      else if (line.startsWith('event:')) kind = line.slice(6).trim();
      else if (line.startsWith('data:')) data += line.slice(5).trim();
    }
    if (kind === 'end') {
      ended = true;
      break;
    }
    if (seq === undefined) continue; // a keepalive comment
    if (seq !== expectedSeq) gap = true;
    expectedSeq = seq + 1;
    const envelope = JSON.parse(data);
    const ts = Date.parse(envelope.ts);
    if (ts > since) delays.push(frame.receivedAt - ts);
    lastStatus = envelope.kind === 'status' ? envelope.data?.status : undefined;
  }
  return { delays, events: expectedSeq - 1, complete: ended && !gap && lastStatus === 'finished' };
}

if (process.send) {
  let streams;
  process.on('message', async (message) => {
    if (message.type === 'open') {
      const url = new URL(message.url);
      let opened = 0;
      const onHeaders = () => {
        if (++opened === message.count) process.send({ type: 'opened' });
      };
      streams = Promise.all(
        Array.from({ length: message.count }, () => subscribe(url, message.token, message.runId, onHeaders)),
      );
      streams.catch((err) => process.send({ type: 'failed', message: err.message }));
    } else if (message.type === 'measure') {
      let results;
      try {
        results = (await streams).map((s) => measureStream(s, message.since));
      } catch {
        return; // 'failed' was sent
      }
      process.send({
        type: 'result',
        delays: results.flatMap((r) => r.delays),
        complete: results.filter((r) => r.complete).length,
        incomplete: results.filter((r) => !r.complete).length,
        events: [...new Set(results.map((r) => r.events))],
      });
      // The parent ends this process once it has the result (a disconnect here could overtake the message).
    }
  });
}
