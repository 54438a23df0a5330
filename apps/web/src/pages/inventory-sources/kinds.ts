// What each kind of inventory source is, in words.
import type { InventorySourceKind } from '@baton/contracts';

export const KIND_LABEL: Record<InventorySourceKind, string> = {
  script: 'Script in a project',
  plugin: 'Plugin config in a project',
  url: 'HTTPS URL',
};

export const KIND_HINT: Record<InventorySourceKind, string> = {
  script:
    'An executable in the project that prints inventory-script JSON; it runs in a checkout of the last synced commit.',
  plugin: 'An inventory plugin config file in the project (e.g. constructed, generator).',
  url: 'An https:// URL answering inventory-script JSON, optionally with a token credential sent as a bearer token.',
};
