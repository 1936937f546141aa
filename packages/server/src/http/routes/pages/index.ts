import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services.ts';
import { appPageRoutes } from './app.ts';
import { publicPageRoutes } from './public.ts';
import { androidRoutes } from './android.ts';
import { sdkDownloadRoutes } from './sdk-downloads.ts';
import { wordpressDownloadRoutes } from './wordpress-download.ts';

/** The HTML side of the service: the owner app, the public pages and the downloads. */
export async function pageRoutes(app: FastifyInstance, s: Services): Promise<void> {
  await appPageRoutes(app, s);
  await publicPageRoutes(app, s);
  await androidRoutes(app, s);
  await sdkDownloadRoutes(app, s);
  await wordpressDownloadRoutes(app, s);
}
