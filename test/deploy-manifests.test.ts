// deploy/ (issue 19, "Deployment"): the Dockerfile, compose.yaml and the Kubernetes manifests, held to the code.
// No image can be built here and kubeconform is not installable, so each file is parsed and checked against a schema
// of the fields that matter: probe paths are routes of the API, variables are settings the code reads, keys arrive
// as files only their owner may read, containers run as a non-root user, selectors match the pods they mean.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  apiSettingNames,
  DEPLOY,
  type DockerStage,
  fileMode,
  probePaths,
  readDockerfile,
  readYamlDocuments,
  workerSettingNames,
  workspaceManifests,
} from './support/deploy-files.js';

const API_SETTINGS = apiSettingNames();
const WORKER_SETTINGS = workerSettingNames();
const PROBE_PATHS = probePaths();
/** A key file's mode: no bits for group or others (Baton refuses anything else, see packages/executor key-file.ts). */
const ownerOnly = (mode: number | undefined) => mode !== undefined && (mode & 0o077) === 0;
/** The path a health check command fetches: after `http://host:port` or, when the URL is assembled, a quote. */
const probedPath = (command: string) => /(?:https?:\/\/[^/'"\s]+|['"])(\/[a-z]+)\b/.exec(command)?.[1];

describe('the setting and route lists the checks rely on', () => {
  // Guards the guards: an empty list would let every check below pass.
  it('know the API and worker settings and the probe routes', () => {
    expect(API_SETTINGS).toContain('BATON_DATABASE_URL');
    expect(API_SETTINGS).toContain('BATON_MASTER_KEY_FILE');
    expect(API_SETTINGS).not.toContain('BATON_WORKER_CONCURRENCY');
    expect(WORKER_SETTINGS).toContain('BATON_WORKER_CONCURRENCY');
    expect(WORKER_SETTINGS).not.toContain('BATON_DATABASE_URL');
    expect([...PROBE_PATHS].sort()).toEqual(expect.arrayContaining(['/healthz', '/readyz']));
    expect(PROBE_PATHS).not.toContain('/readyz-not-a-route');
  });
});

describe('deploy/Dockerfile', () => {
  const stages = readDockerfile(path.join(DEPLOY, 'Dockerfile'));
  const stage = (name: string): DockerStage => {
    const found = stages.find((s) => s.name === name);
    if (!found) throw new Error(`no stage ${name}`);
    return found;
  };
  const runs = (s: DockerStage) => s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
  const last = (s: DockerStage, keyword: string) => s.instructions.filter((i) => i.keyword === keyword).at(-1);

  it('builds in one stage and runs in another', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    const build = runs(stage('build')).join('\n');
    expect(build).toMatch(/pnpm install --frozen-lockfile(?! --prod)/);
    expect(build).toMatch(/pnpm build/);
    // Development dependencies are dropped before the runtime stage copies node_modules.
    expect(build).toMatch(/pnpm install --frozen-lockfile --prod/);
  });

  it('copies every workspace manifest before the frozen install (else the lockfile does not match)', () => {
    const copied = stage('build')
      .instructions.filter((i) => i.keyword === 'COPY')
      .map((i) => i.args.split(' ')[0]);
    for (const manifest of workspaceManifests()) expect(copied).toContain(manifest);
  });

  it('ships only the build output, the UI and production dependencies, with what a run needs', () => {
    const runtime = stage('runtime');
    const fromBuild = runtime.instructions
      .filter((i) => i.keyword === 'COPY' && i.args.startsWith('--from=build '))
      .map((i) => i.args.split(' ')[1]!);
    expect(fromBuild).toEqual(
      expect.arrayContaining(['/app/apps/api/dist', '/app/apps/worker/dist', '/app/apps/web/dist']),
    );
    expect(fromBuild.some((src) => /\/src$/.test(src))).toBe(false);
    const install = runs(runtime).find((r) => r.includes('apt-get install'));
    expect(install).toContain('--no-install-recommends');
    for (const pkg of ['ansible-core', 'openssh-client', 'git', 'bubblewrap'])
      expect(install?.split(' ')).toContain(pkg);
  });

  it('runs as a non-root user, serves by default, checks /readyz and keeps the data dir on a volume', () => {
    const runtime = stage('runtime');
    const user = last(runtime, 'USER')?.args ?? 'root';
    expect(user.split(':')[0]).not.toMatch(/^(root|0)$/);
    expect(JSON.parse(last(runtime, 'CMD')!.args)).toEqual(['serve']);
    expect(JSON.parse(last(runtime, 'ENTRYPOINT')!.args)).toContain('baton');
    const healthcheck = last(runtime, 'HEALTHCHECK')!.args;
    const probed = probedPath(healthcheck);
    expect(probed).toBe('/readyz');
    expect(PROBE_PATHS).toContain(probed);
    const env = Object.fromEntries(
      runtime.instructions
        .filter((i) => i.keyword === 'ENV')
        .flatMap((i) => [...i.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])),
    );
    for (const name of Object.keys(env).filter((n) => n.startsWith('BATON_'))) expect(API_SETTINGS).toContain(name);
    expect(JSON.parse(last(runtime, 'VOLUME')!.args)).toContain(env.BATON_DATA_DIR);
  });
});

const ComposeHealthcheck = z.union([
  z.object({ disable: z.literal(true) }),
  z.object({ test: z.array(z.string()).min(2), interval: z.string(), retries: z.number().int().positive() }),
]);
const ComposeService = z.object({
  image: z.string().min(1),
  build: z.object({ context: z.string(), dockerfile: z.string() }).optional(),
  command: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.string()).optional(),
  secrets: z
    .array(z.object({ source: z.string(), mode: z.number().int(), uid: z.string(), gid: z.string() }))
    .optional(),
  healthcheck: ComposeHealthcheck.optional(),
  depends_on: z.record(z.string(), z.object({ condition: z.enum(['service_healthy', 'service_started']) })).optional(),
  volumes: z.array(z.string()).optional(),
});
const Compose = z.object({
  services: z.record(z.string(), ComposeService),
  secrets: z.record(z.string(), z.object({ file: z.string() })),
  volumes: z.record(z.string(), z.unknown()),
});

describe('deploy/compose.yaml', () => {
  const [document] = readYamlDocuments(path.join(DEPLOY, 'compose.yaml'));
  const compose = Compose.parse(document);
  const services = Object.entries(compose.services);
  const baton = services.filter(([, s]) => s.build?.dockerfile === 'deploy/Dockerfile');
  const apis = baton.filter(([, s]) => s.command?.[0] === 'serve');
  const workers = baton.filter(([, s]) => s.command?.[0] === 'worker');

  it('runs PostgreSQL, Redis, two API replicas and two workers, all Baton services from one image', () => {
    expect(services.map(([, s]) => s.image)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^postgres:/), expect.stringMatching(/^redis:/)]),
    );
    expect(apis).toHaveLength(2);
    expect(workers).toHaveLength(2);
    expect(new Set(baton.map(([, s]) => s.image)).size).toBe(1);
  });

  it('keeps Redis durable: AOF fsynced every second, no eviction of queue keys', () => {
    const [, redis] = services.find(([, s]) => s.image.startsWith('redis:'))!;
    const command = (redis as { command?: string[] }).command?.join(' ') ?? '';
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--appendfsync everysec');
    expect(command).toContain('--maxmemory-policy noeviction');
    expect(redis.volumes?.some((v) => v.endsWith(':/data'))).toBe(true);
  });

  it('sets only variables the processes read, the keys from secret files only their owner may read', () => {
    for (const [name, service] of [...apis, ...workers]) {
      const known = service.command?.[0] === 'serve' ? API_SETTINGS : WORKER_SETTINGS;
      const env = service.environment ?? {};
      for (const variable of Object.keys(env))
        expect({ service: name, variable, known: known.has(variable) }).toEqual({
          service: name,
          variable,
          known: true,
        });
      expect(env.BATON_MASTER_KEY).toBeUndefined();
      expect(env.BATON_WORKER_KEY).toBeUndefined();
      expect(env.BATON_WORKER_KEY_FILE).toBeDefined();
      for (const [variable, file] of Object.entries(env).filter(([v]) => v.endsWith('_KEY_FILE'))) {
        const secret = service.secrets?.find((s) => file === `/run/secrets/${s.source}`);
        expect({ service: name, variable, mounted: secret !== undefined }).toEqual({
          service: name,
          variable,
          mounted: true,
        });
        expect(ownerOnly(fileMode(secret!.mode))).toBe(true);
        expect(secret!.uid).toBe('10001');
        expect(compose.secrets[secret!.source]).toBeDefined();
      }
    }
    for (const [, api] of apis) expect(api.environment?.BATON_MASTER_KEY_FILE).toBeDefined();
  });

  it('checks the API on /readyz and starts each service after what it needs is healthy', () => {
    for (const [, api] of apis) {
      const check = api.healthcheck as { test: string[] };
      const probed = probedPath(check.test.join(' '));
      expect(probed).toBe('/readyz');
      expect(PROBE_PATHS).toContain(probed);
    }
    for (const [name, service] of services) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        const target = compose.services[dependency];
        expect({ service: name, dependency, exists: target !== undefined }).toEqual({
          service: name,
          dependency,
          exists: true,
        });
        if (condition === 'service_healthy') expect(target!.healthcheck).toMatchObject({ test: expect.any(Array) });
      }
    }
    for (const [, api] of apis) expect(Object.keys(api.depends_on ?? {}).sort()).toEqual(['postgres', 'redis']);
  });
});

const Labels = z.record(z.string(), z.string());
const Probe = z.object({ httpGet: z.object({ path: z.string(), port: z.union([z.string(), z.number()]) }) });
const EnvVar = z.object({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z
    .object({
      secretKeyRef: z.object({ name: z.string(), key: z.string() }).optional(),
      configMapKeyRef: z.object({ name: z.string(), key: z.string() }).optional(),
      fieldRef: z.object({ fieldPath: z.string() }).optional(),
    })
    .optional(),
});
const ContainerSecurity = z.object({
  allowPrivilegeEscalation: z.literal(false),
  capabilities: z.object({ drop: z.array(z.string()).refine((d) => d.includes('ALL'), 'must drop ALL') }),
});
const Container = z.object({
  name: z.string(),
  image: z.string(),
  args: z.array(z.string()).optional(),
  command: z.array(z.string()).optional(),
  ports: z.array(z.object({ name: z.string(), containerPort: z.number().int() })).optional(),
  env: z.array(EnvVar).optional(),
  envFrom: z.array(z.object({ configMapRef: z.object({ name: z.string() }) })).optional(),
  readinessProbe: Probe.optional(),
  livenessProbe: Probe.optional(),
  startupProbe: Probe.optional(),
  securityContext: ContainerSecurity,
  volumeMounts: z.array(z.object({ name: z.string(), mountPath: z.string(), readOnly: z.boolean().optional() })),
});
const Volume = z.object({
  name: z.string(),
  secret: z.object({ secretName: z.string(), defaultMode: z.number().int() }).optional(),
  emptyDir: z.object({ medium: z.literal('Memory').optional() }).optional(),
});
const Metadata = z.object({ name: z.string(), namespace: z.string().optional(), labels: Labels.optional() });
const Deployment = z.object({
  apiVersion: z.literal('apps/v1'),
  kind: z.literal('Deployment'),
  metadata: Metadata,
  spec: z.object({
    replicas: z.number().int().min(2),
    selector: z.object({ matchLabels: Labels }),
    template: z.object({
      metadata: z.object({ labels: Labels }),
      spec: z.object({
        securityContext: z.object({
          runAsNonRoot: z.literal(true),
          runAsUser: z.number().int().positive(),
          fsGroup: z.number().int().positive().optional(),
        }),
        initContainers: z.array(Container).optional(),
        containers: z.array(Container).length(1),
        volumes: z.array(Volume),
      }),
    }),
  }),
});
const Manifest = z.discriminatedUnion('kind', [
  Deployment,
  z.object({ apiVersion: z.literal('v1'), kind: z.literal('Namespace'), metadata: Metadata }),
  z.object({ apiVersion: z.literal('v1'), kind: z.literal('ConfigMap'), metadata: Metadata, data: Labels }),
  z.object({
    apiVersion: z.literal('v1'),
    kind: z.literal('Secret'),
    metadata: Metadata,
    type: z.literal('Opaque'),
    stringData: Labels,
  }),
  z.object({
    apiVersion: z.literal('v1'),
    kind: z.literal('Service'),
    metadata: Metadata,
    spec: z.object({
      selector: Labels,
      ports: z.array(z.object({ port: z.number().int(), targetPort: z.union([z.string(), z.number()]) })),
    }),
  }),
  z.object({
    apiVersion: z.literal('policy/v1'),
    kind: z.literal('PodDisruptionBudget'),
    metadata: Metadata,
    spec: z.object({ minAvailable: z.number().int().positive(), selector: z.object({ matchLabels: Labels }) }),
  }),
]);
type Manifest = z.infer<typeof Manifest>;
type Deployment = z.infer<typeof Deployment>;
type Of<K extends Manifest['kind']> = Extract<Manifest, { kind: K }>;

const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('deploy/kubernetes', () => {
  const dir = path.join(DEPLOY, 'kubernetes');
  const manifests: Manifest[] = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => readYamlDocuments(path.join(dir, f)).map((doc) => Manifest.parse(doc)));
  const ofKind = <K extends Manifest['kind']>(kind: K) => manifests.filter((m): m is Of<K> => m.kind === kind);
  const deployments = ofKind('Deployment');
  const mainContainer = (d: Deployment) => d.spec.template.spec.containers[0]!;
  const api = deployments.find((d) => mainContainer(d).args?.[0] === 'serve')!;
  const worker = deployments.find((d) => mainContainer(d).args?.[0] === 'worker')!;

  it('has an API and a worker Deployment, a Service, key Secret, ConfigMap and disruption budgets, in one namespace', () => {
    expect(api).toBeDefined();
    expect(worker).toBeDefined();
    expect(ofKind('Service')).toHaveLength(1);
    expect(ofKind('ConfigMap')).toHaveLength(1);
    expect(ofKind('Secret').length).toBeGreaterThanOrEqual(1);
    expect(ofKind('PodDisruptionBudget')).toHaveLength(2);
    const [namespace] = ofKind('Namespace');
    for (const m of manifests.filter((x) => x.kind !== 'Namespace'))
      expect(m.metadata.namespace).toBe(namespace!.metadata.name);
    const images = deployments
      .flatMap((d) => [...(d.spec.template.spec.initContainers ?? []), ...d.spec.template.spec.containers])
      .map((c) => c.image);
    expect(new Set(images).size).toBe(1);
  });

  it('probes the API on routes it serves: readiness on /readyz, liveness on /healthz', () => {
    const container = mainContainer(api);
    expect(container.readinessProbe?.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe?.httpGet.path).toBe('/healthz');
    const portNames = (container.ports ?? []).map((p) => p.name);
    for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
      if (!probe) continue;
      expect(PROBE_PATHS).toContain(probe.httpGet.path);
      expect(portNames).toContain(probe.httpGet.port);
    }
  });

  it('selects its own pods: Deployment selectors, the Service and each disruption budget', () => {
    for (const d of deployments)
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
    const [service] = ofKind('Service');
    const served = deployments.filter((d) => matches(service!.spec.selector, d.spec.template.metadata.labels));
    expect(served).toEqual([api]);
    const portNames = (mainContainer(api).ports ?? []).map((p) => p.name);
    for (const port of service!.spec.ports) expect(portNames).toContain(port.targetPort);
    for (const pdb of ofKind('PodDisruptionBudget')) {
      const covered = deployments.filter((d) =>
        matches(pdb.spec.selector.matchLabels, d.spec.template.metadata.labels),
      );
      expect(covered).toHaveLength(1);
      expect(pdb.spec.minAvailable).toBeLessThan(covered[0]!.spec.replicas);
    }
    const budgeted = ofKind('PodDisruptionBudget').map((pdb) =>
      deployments.find((d) => matches(pdb.spec.selector.matchLabels, d.spec.template.metadata.labels)),
    );
    expect(new Set(budgeted)).toEqual(new Set([api, worker]));
  });

  it('sets only variables the processes read, from ConfigMaps and Secrets that hold them', () => {
    const configMaps = new Map(ofKind('ConfigMap').map((c) => [c.metadata.name, c.data]));
    const secrets = new Map(ofKind('Secret').map((s) => [s.metadata.name, s.stringData]));
    for (const [deployment, known] of [
      [api, API_SETTINGS],
      [worker, WORKER_SETTINGS],
    ] as const) {
      const container = mainContainer(deployment);
      const names = (container.env ?? []).map((e) => e.name);
      for (const from of container.envFrom ?? []) {
        expect(configMaps.has(from.configMapRef.name)).toBe(true);
        names.push(...Object.keys(configMaps.get(from.configMapRef.name)!));
      }
      for (const name of names)
        expect({ deployment: deployment.metadata.name, name, known: known.has(name) }).toEqual({
          deployment: deployment.metadata.name,
          name,
          known: true,
        });
      for (const e of container.env ?? []) {
        const secretRef = e.valueFrom?.secretKeyRef;
        if (secretRef) expect(Object.keys(secrets.get(secretRef.name) ?? {})).toContain(secretRef.key);
        const mapRef = e.valueFrom?.configMapKeyRef;
        if (mapRef) expect(Object.keys(configMaps.get(mapRef.name) ?? {})).toContain(mapRef.key);
      }
      expect(names).not.toContain('BATON_MASTER_KEY');
      expect(names).not.toContain('BATON_WORKER_KEY');
    }
  });

  it('mounts the keys as files only the non-root baton user may read, copied from the Secret', () => {
    const secrets = new Map(ofKind('Secret').map((s) => [s.metadata.name, s.stringData]));
    for (const deployment of [api, worker]) {
      const pod = deployment.spec.template.spec;
      const container = mainContainer(deployment);
      expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
      const keyFiles = (container.env ?? []).filter((e) => e.name.endsWith('_KEY_FILE'));
      expect(keyFiles.map((e) => e.name)).toContain('BATON_WORKER_KEY_FILE');
      for (const { name, value } of keyFiles) {
        const mount = container.volumeMounts.find((m) => value?.startsWith(`${m.mountPath}/`));
        expect({ name, mounted: mount !== undefined }).toEqual({ name, mounted: true });
        const volume = pod.volumes.find((v) => v.name === mount!.name)!;
        // Never on disk: an in-memory volume the init container fills from the Secret as the baton user, mode 0400.
        expect(volume.emptyDir?.medium).toBe('Memory');
        const filler = pod.initContainers?.find((c) => c.volumeMounts.some((m) => m.name === volume.name));
        const command = filler?.command ?? [];
        expect(command.slice(0, 3)).toEqual(['install', '-m', '0400']);
        expect(ownerOnly(parseInt(command[2]!, 8))).toBe(true);
        const copied = command.slice(3, -1);
        const target = command.at(-1)!;
        expect(filler!.volumeMounts.find((m) => m.name === volume.name)?.mountPath).toBe(target.replace(/\/$/, ''));
        const file = path.basename(value!);
        const source = copied.find((c) => path.basename(c) === file);
        expect({ name, copied: source !== undefined }).toEqual({ name, copied: true });
        const sourceMount = filler!.volumeMounts.find((m) => source!.startsWith(`${m.mountPath}/`))!;
        const secretVolume = pod.volumes.find((v) => v.name === sourceMount.name)?.secret;
        expect(secretVolume).toBeDefined();
        expect(fileMode(secretVolume!.defaultMode)! & 0o007).toBe(0);
        expect(Object.keys(secrets.get(secretVolume!.secretName) ?? {})).toContain(file);
      }
    }
  });
});
