// The web app manifest (/manifest.webmanifest): what makes /app installable.

export const THEME_COLOUR = '#2456c6';

export const manifest = {
  id: '/app',
  name: 'Mandate',
  short_name: 'Mandate',
  description: 'Approve, with a passkey, what your software agents may do at each site.',
  start_url: '/app',
  scope: '/app',
  display: 'standalone',
  orientation: 'any',
  background_color: '#f4f6f9',
  theme_color: THEME_COLOUR,
  categories: ['productivity', 'security'],
  // Full-bleed artwork with the mark inside the safe zone: the same pictures serve both purposes.
  icons: [192, 512].flatMap((size) => ['any', 'maskable'].map((purpose) => ({
    src: `/icon-${size}.png`,
    sizes: `${size}x${size}`,
    type: 'image/png',
    purpose,
  }))),
};
