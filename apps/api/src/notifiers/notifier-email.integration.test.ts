// E-mail notifications (issue 17) on both databases, received by a real SMTP server (smtp-server) on loopback:
// a test message with text and HTML parts, a held run mailed to its policy's approvers, and SMTP refusals.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Delivery } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { SMTPServer } from 'smtp-server';
import { bearer, createHarness, type Harness } from '../testing/harness.js';

interface Mail {
  from: string;
  to: string[];
  user: string | undefined;
  raw: string;
}

async function smtp() {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === 'baton' && auth.password === 'smtp-password-1') cb(null, { user: 'baton' });
      else cb(new Error('bad credentials'));
    },
    onRcptTo(address, _session, cb) {
      if (address.address.startsWith('full@'))
        return cb(Object.assign(new Error('mailbox full, later'), { responseCode: 452 }));
      if (address.address.startsWith('nobody@'))
        return cb(Object.assign(new Error('no such user'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: session.user as string | undefined,
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { mails, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const LOCAL = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
const PLAY = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: { msg: hi }\n';

describe.each(DIALECTS)('e-mail notifications on %s', (dialect) => {
  let h: Harness;
  let mail: Awaited<ReturnType<typeof smtp>>;
  let admin: Record<string, string>;

  beforeAll(async () => {
    h = await createHarness(dialect, { notify: { allowPrivate: true } });
    admin = bearer(h.admin.token);
    mail = await smtp();
  });
  afterAll(async () => {
    await mail.close();
    await h.close();
  });

  const emailNotifier = async (to: string[], events: string[]) => {
    const r = await h.http
      .post('/v1/notifiers')
      .set(admin)
      .send({
        name: `mail ${Math.random().toString(36).slice(2, 8)}`,
        kind: 'email',
        config: {
          host: '127.0.0.1',
          port: mail.port,
          security: 'none',
          username: 'baton',
          password: 'smtp-password-1',
          from: 'baton@example.com',
          to,
        },
        events,
      });
    expect(r.status).toBe(201);
    expect(r.body.secret_fields).toEqual(['password']);
    expect(r.text).not.toContain('smtp-password-1');
    return r.body.id as string;
  };
  const log = async (id: string) => (await h.http.get(`/v1/notifiers/${id}/deliveries`).set(admin)).body as Delivery[];

  it('delivers a test message over authenticated SMTP with a text and an HTML part', async () => {
    const id = await emailNotifier(['ops@example.com'], ['run.failed']);
    const before = mail.mails.length;
    await h.http.post(`/v1/notifiers/${id}/test`).set(admin).send();
    await h.services.notifySender.deliverDue();
    const [got] = mail.mails.slice(before);
    expect(got).toMatchObject({ from: 'baton@example.com', to: ['ops@example.com'], user: 'baton' });
    expect(got!.raw).toMatch(/^Subject: Baton test message for notifier mail /m);
    expect(got!.raw).toContain('Content-Type: text/plain');
    expect(got!.raw).toContain('Content-Type: text/html');
    expect(got!.raw).toMatch(/^X-Baton-Delivery: dlv_/m);
    expect((await log(id))[0]).toMatchObject({ status: 'delivered', attempts: 1, response_code: 250 });
  });

  it('mails a held run to the notifier’s addresses and the policy’s approvers', async () => {
    const approver = await h.user('operator');
    await h.http.put(`/v1/users/${approver.id}`).set(admin).send({ email: 'approver@example.com' });
    const policy = await h.http
      .post('/v1/policies')
      .set(admin)
      .send({ name: 'hold everything here', match: { playbooks: ['(inline)'] }, approvers: { users: [approver.id] } });
    expect(policy.status).toBe(201);
    const id = await emailNotifier(['ops@example.com'], ['run.held']);
    const run = await h.http.post('/v1/runs').set(admin).send({ playbook: PLAY, inventory: LOCAL });
    expect(run.status).toBe(201);
    expect(run.body.status).toBe('held');
    const before = mail.mails.length;
    await h.services.notifySender.tick();
    await h.services.notifySender.tick();
    const sent = mail.mails.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.to.sort()).toEqual(['approver@example.com', 'ops@example.com']);
    expect(sent[0]!.raw).toContain(run.body.id);
    expect((await log(id)).map((d) => [d.event, d.status])).toEqual([['run.held', 'delivered']]);
    await h.http.delete(`/v1/policies/${policy.body.id}`).set(admin);
  });

  it('a 4xx SMTP answer is retried, a 5xx one ends the delivery', async () => {
    const later = await emailNotifier(['full@example.com'], ['run.failed']);
    const never = await emailNotifier(['nobody@example.com'], ['run.failed']);
    await h.http.post(`/v1/notifiers/${later}/test`).set(admin).send();
    await h.http.post(`/v1/notifiers/${never}/test`).set(admin).send();
    await h.services.notifySender.deliverDue();
    expect((await log(later))[0]).toMatchObject({ status: 'retrying', response_code: 452 });
    expect((await log(never))[0]).toMatchObject({ status: 'dead', response_code: 550 });
  });
});
