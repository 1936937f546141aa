export { buildPublicSite, type PublicResponse, type PublicSite, type PublicSiteOptions } from './public/index.ts';
export { CHALLENGE_ACTION, CHALLENGE_SCOPE, challengeSite } from './public/pages/challenge.ts';
export type { CheckReport, CheckView } from './public/pages/check.ts';
export type { CheckAgentView } from './public/pages/check-agent.ts';
export { appAssets, appVersion, isFresh, shellVersion, takeoverPage, type StaticAsset } from './app-assets.ts';
export { connectPage, connectErrorPage, type ConnectPage, type ConnectPageView } from './connect-page.ts';
export { appConsentPage, appConsentErrorPage, type AppConsentPageView } from './app-consent-page.ts';
