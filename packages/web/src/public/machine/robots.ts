/** Public pages are open to crawlers; the API and the owner app are not pages to index. */
export function robotsTxt(baseUrl: string): string {
  return ['User-agent: *', 'Allow: /', 'Disallow: /api/', 'Disallow: /app', '', `Sitemap: ${baseUrl}/sitemap.xml`, ''].join('\n');
}
