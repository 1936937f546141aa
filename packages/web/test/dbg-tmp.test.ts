import { it } from 'node:test';
import { launchChromium } from '../../server/test/helpers/browser.ts';
import { startServer } from '../../server/test/helpers/server-process.ts';
it('dbg', async () => {
  const s = await startServer({ name: 'dbg' });
  const b = await launchChromium('dbg');
  const p = await (await b.newContext({ viewport: { width: 390, height: 844 } })).newPage();
  await p.goto(s.baseUrl + '/for-shops#modes');
  await p.locator('.table-wrap').first().screenshot({ path: '/tmp/dp-shops-table.png' });
  await p.locator('.table-wrap').first().evaluate((e) => { e.scrollLeft = 60; });
  await p.locator('.table-wrap').first().screenshot({ path: '/tmp/dp-shops-table-mid.png' });
  await p.goto(s.baseUrl + '/docs/reference/decisions');
  await p.getByText('password/email').first().scrollIntoViewIfNeeded();
  await p.screenshot({ path: '/tmp/dp-decisions.png' });
  await b.close(); await s.stop();
});
