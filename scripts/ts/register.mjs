// `node --import ./scripts/ts/register.mjs some.ts`: installs the TypeScript hooks of ./hooks.mjs.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
