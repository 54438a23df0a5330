// `node --import ./bench/ingest/register.mjs bench/ingest/ingest.bench.ts`: installs the TypeScript hooks.
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
