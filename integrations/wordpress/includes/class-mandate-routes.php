<?php
/**
 * Route lines of the settings ("METHOD /route [scope] [| text]") and their match against a REST request.
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

/**
 * A parsed line: methods, route regex, optional scope, optional text (a step-up action or a CIBA message).
 */
final class Mandate_Routes {

	/**
	 * The lines of a setting, parsed; malformed lines are left out.
	 *
	 * @param string $setting The setting's key.
	 * @return array<int, array{methods:string[],route:string,scope:string,text:string}>
	 */
	public static function parse( string $setting ): array {
		$out = array();
		foreach ( Mandate_Settings::lines( Mandate_Settings::get( $setting ) ) as $line ) {
			$text_parts = explode( '|', $line, 2 );
			$words      = preg_split( '/\s+/', trim( $text_parts[0] ) ) ?: array();
			if ( count( $words ) < 2 || count( $words ) > 3 || '/' !== ( $words[1][0] ?? '' ) ) {
				continue;
			}
			$out[] = array(
				'methods' => array_map( 'strtoupper', explode( ',', $words[0] ) ),
				'route'   => $words[1],
				'scope'   => $words[2] ?? '',
				'text'    => trim( $text_parts[1] ?? '' ),
			);
		}
		return $out;
	}

	/**
	 * The first line matching the request, with `{name}` in its text replaced by the route's named
	 * groups; null when none matches.
	 *
	 * @param string          $setting The setting's key.
	 * @param WP_REST_Request $request The request.
	 */
	public static function match( string $setting, WP_REST_Request $request ): ?array {
		$method = strtoupper( $request->get_method() );
		$route  = untrailingslashit( $request->get_route() );
		foreach ( self::parse( $setting ) as $line ) {
			if ( ! in_array( '*', $line['methods'], true ) && ! in_array( $method, $line['methods'], true ) ) {
				continue;
			}
			$regex = '@^' . str_replace( '@', '\@', untrailingslashit( $line['route'] ) ) . '$@i';
			$found = @preg_match( $regex, $route, $groups ); // phpcs:ignore WordPress.PHP.NoSilencedErrors -- a bad regex in the settings matches nothing.
			if ( 1 !== $found ) {
				continue;
			}
			$line['text'] = preg_replace_callback(
				'/\{(\w+)\}/',
				static fn( $m ) => isset( $groups[ $m[1] ] ) && ! is_int( $m[1] ) ? (string) $groups[ $m[1] ] : $m[0],
				$line['text']
			);
			return $line;
		}
		return null;
	}
}
