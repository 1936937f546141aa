export { buildPublicSite, type PublicResponse, type PublicSite, type PublicSiteOptions } from './public/index.ts';
export { appAssets, isFresh, type StaticAsset } from './app-assets.ts';
