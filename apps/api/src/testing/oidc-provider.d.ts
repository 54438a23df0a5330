// oidc-provider ships no type declarations; the test issuer uses only this much of it.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AccountClaims {
    sub: string;
    [claim: string]: unknown;
  }
  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Promise<AccountClaims> | AccountClaims;
  }
  export interface Configuration {
    clients?: Array<Record<string, unknown>>;
    claims?: Record<string, string[]>;
    scopes?: string[];
    pkce?: { required?: () => boolean };
    cookies?: { keys?: string[] };
    features?: Record<string, unknown>;
    findAccount?: (ctx: unknown, id: string) => Promise<Account | undefined> | Account | undefined;
    ttl?: Record<string, number>;
    [key: string]: unknown;
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
