// Single sign-on from the browser: the OpenID Connect button appears because the server offers it, and a round
// trip through a real issuer (oidc-provider on loopback, its own login and consent pages) ends signed in.
import { afterAll, describe, expect, it } from '@jest/globals';
import { startTestIssuer, type TestIssuer } from '../../apps/api/src/testing/oidc-issuer.js';
import { freePort } from '../support/baton-process.js';
import { openPage, setupUi, visited } from './support/browser.js';

let issuer: TestIssuer;

// The issuer comes first: the server's environment names it, and its redirect URI names the server's port.
const { ui, browser } = setupUi(async () => {
  const port = await freePort();
  issuer = await startTestIssuer(`http://127.0.0.1:${port}/auth/oidc/callback`);
  issuer.accounts.set('sso-ada', { preferred_username: 'ada', email: 'ada@example.com', groups: ['ops'] });
  return {
    env: {
      BATON_OIDC_ISSUER: issuer.issuer,
      BATON_OIDC_CLIENT_ID: issuer.clientId,
      BATON_OIDC_CLIENT_SECRET: issuer.clientSecret,
      BATON_OIDC_SCOPES: 'openid profile email groups',
    },
    port,
  };
});

afterAll(async () => {
  await issuer?.close();
});

describe('single sign-on in the browser', () => {
  it('shows the OpenID Connect button (and no SAML one) and signs in through the issuer', async () => {
    const { page, problems, close } = await openPage(browser());
    try {
      await page.goto(`${ui().base}/ui/sign-in`);
      const oidc = page.getByRole('link', { name: 'Sign in with OpenID Connect' });
      await oidc.waitFor();
      expect(await page.getByRole('link', { name: 'Sign in with SAML' }).count()).toBe(0);
      await visited(page, 'sign-in-with-sso');
      await oidc.click();
      // The issuer's own development login and consent pages.
      await page.locator('input[name="login"]').fill('sso-ada');
      await page.locator('input[name="password"]').fill('any');
      await page.locator('button[type="submit"]').click();
      await page.locator('button[type="submit"]').click();
      await page.getByTestId('whoami').filter({ hasText: 'ada' }).waitFor();
      // The one-time code is gone from the address once used.
      expect(page.url()).not.toContain('sso_code');
      expect(await page.evaluate(() => sessionStorage.getItem('baton.token'))).toMatch(/^bt_/);
      // The issuer's development pages ask for a web font this closed network cannot reach: not ours.
      expect(problems.filter((p) => !p.includes('fonts.googleapis.com'))).toEqual([]);
    } finally {
      await close();
    }
  });

  it('explains a failed sign-in (#sso_error) and a used code, on the sign-in page', async () => {
    const { page, problems, close } = await openPage(browser());
    try {
      await page.goto(`${ui().base}/ui/#sso_error=access_denied`);
      await page.getByRole('alert').filter({ hasText: 'declined' }).waitFor();
      expect(page.url()).not.toContain('sso_error');
      await page.goto(`${ui().base}/ui/#sso_code=not-a-code-this-server-issued`);
      await page
        .getByRole('alert')
        .filter({ hasText: /expired or was already used/ })
        .waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem('baton.token'))).toBeNull();
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
