export { buildPublicSite, type PublicResponse, type PublicSite, type PublicSiteOptions } from './public/index.ts';
export type { CheckAgentView } from './public/pages/check-agent.ts';
export { appAssets, isFresh, takeoverPage, type StaticAsset } from './app-assets.ts';
export { connectPage, connectErrorPage, type ConnectPage, type ConnectPageView } from './connect-page.ts';
