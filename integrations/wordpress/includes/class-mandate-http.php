<?php
/**
 * Calls to the Mandate service, all through WordPress's HTTP API with a timeout and no redirects.
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

/**
 * A call Mandate did not answer as it should (unreachable, not JSON, an unexpected status): never a verdict.
 */
final class Mandate_Unavailable extends RuntimeException {}

/**
 * Discovery, keys, cloud verify and the token endpoints.
 */
final class Mandate_Http {

	/** Seconds for any call to Mandate. */
	const TIMEOUT = 5;

	/** How long discovery and the keys are kept (a rotation's new kid makes the keys be fetched again). */
	const CACHE_SECONDS = 600;

	/**
	 * A JSON call. Answers [status, decoded body]; throws Mandate_Unavailable with a readable reason when
	 * there is no JSON answer.
	 *
	 * @param string $method GET or POST.
	 * @param string $url    The full address.
	 * @param array  $args   `json` (a body sent as JSON), `form` (as a form), `headers`.
	 * @return array{0:int,1:mixed}
	 */
	public static function call( string $method, string $url, array $args = array() ): array {
		$headers = array_merge( array( 'Accept' => 'application/json' ), $args['headers'] ?? array() );
		$body    = null;
		if ( isset( $args['json'] ) ) {
			$headers['Content-Type'] = 'application/json';
			$body                    = wp_json_encode( $args['json'] );
		} elseif ( isset( $args['form'] ) ) {
			$headers['Content-Type'] = 'application/x-www-form-urlencoded';
			$body                    = http_build_query( $args['form'], '', '&', PHP_QUERY_RFC3986 );
		}
		$response = wp_remote_request(
			$url,
			array(
				'method'      => $method,
				'headers'     => $headers,
				'body'        => $body,
				'timeout'     => self::TIMEOUT,
				'redirection' => 0,
				'user-agent'  => 'mandate-wordpress/' . MANDATE_PLUGIN_VERSION,
			)
		);
		$where = $method . ' ' . preg_replace( '/\?.*/', '', $url );
		if ( is_wp_error( $response ) ) {
			throw new Mandate_Unavailable( sprintf( 'Mandate cannot be reached (%s: %s)', $where, $response->get_error_message() ) );
		}
		$status  = (int) wp_remote_retrieve_response_code( $response );
		$decoded = json_decode( (string) wp_remote_retrieve_body( $response ), true );
		if ( null === $decoded ) {
			throw new Mandate_Unavailable( sprintf( 'Mandate answered %s with status %d and no JSON', $where, $status ) );
		}
		return array( $status, $decoded );
	}

	/** The service's base URL; throws when the plugin is not configured. */
	public static function service(): string {
		$url = Mandate_Settings::service_url();
		if ( '' === $url ) {
			throw new Mandate_Unavailable( 'the Mandate plugin has no service URL: set it under Settings → Mandate' );
		}
		return $url;
	}

	/**
	 * The OpenID Provider metadata, kept for a while; its issuer must be the service URL.
	 *
	 * @return array<string, mixed>
	 */
	public static function discovery(): array {
		$service = self::service();
		$key     = 'mandate_discovery_' . md5( $service );
		$cached  = get_transient( $key );
		if ( is_array( $cached ) ) {
			return $cached;
		}
		list( $status, $meta ) = self::call( 'GET', $service . '/.well-known/openid-configuration' );
		if ( 200 !== $status || ! is_array( $meta ) || ( $meta['issuer'] ?? null ) !== $service ) {
			throw new Mandate_Unavailable( sprintf( 'Mandate\'s discovery at %s/.well-known/openid-configuration answered %d without the issuer %s', $service, $status, $service ) );
		}
		foreach ( array( 'authorization_endpoint', 'token_endpoint', 'jwks_uri' ) as $field ) {
			if ( ! is_string( $meta[ $field ] ?? null ) ) {
				throw new Mandate_Unavailable( "Mandate's discovery lacks $field" );
			}
		}
		set_transient( $key, $meta, self::CACHE_SECONDS );
		return $meta;
	}

	/**
	 * The signing keys (public EC JWKs by kid). `$fresh` fetches them again, at most once a minute, for
	 * a kid not known yet.
	 *
	 * @param bool $fresh Fetch again.
	 * @return array<string, array>
	 */
	public static function jwks( bool $fresh = false ): array {
		$uri    = (string) self::discovery()['jwks_uri'];
		$key    = 'mandate_jwks_' . md5( $uri );
		$cached = get_transient( $key );
		if ( is_array( $cached ) && ( ! $fresh || time() - (int) $cached['at'] < 60 ) ) {
			return $cached['keys'];
		}
		list( $status, $set ) = self::call( 'GET', $uri );
		if ( 200 !== $status || ! is_array( $set['keys'] ?? null ) ) {
			throw new Mandate_Unavailable( sprintf( 'Mandate\'s keys at %s answered %d without keys', $uri, $status ) );
		}
		$keys = array();
		foreach ( $set['keys'] as $jwk ) {
			if ( is_array( $jwk ) && is_string( $jwk['kid'] ?? null ) ) {
				$keys[ $jwk['kid'] ] = $jwk;
			}
		}
		set_transient(
			$key,
			array(
				'at'   => time(),
				'keys' => $keys,
			),
			self::CACHE_SECONDS
		);
		return $keys;
	}

	/**
	 * A form POST to the token or back-channel authentication endpoint with this site's client
	 * credentials (client_secret_basic; RFC 6749 §2.3.1 form-encodes both parts).
	 *
	 * @param string $endpoint_field The discovery field naming the endpoint.
	 * @param array  $form           The form fields.
	 * @return array{0:int,1:mixed}
	 */
	public static function client_post( string $endpoint_field, array $form ): array {
		$id     = Mandate_Settings::get( 'client_id' );
		$secret = Mandate_Settings::get( 'client_secret' );
		if ( '' === $id || '' === $secret ) {
			throw new Mandate_Unavailable( 'the Mandate plugin has no OIDC client id and secret: set them under Settings → Mandate' );
		}
		$endpoint = self::discovery()[ $endpoint_field ] ?? null;
		if ( ! is_string( $endpoint ) ) {
			throw new Mandate_Unavailable( "Mandate's discovery lacks $endpoint_field" );
		}
		$basic = base64_encode( rawurlencode( $id ) . ':' . rawurlencode( $secret ) ); // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_encode
		return self::call(
			'POST',
			$endpoint,
			array(
				'form'    => $form,
				'headers' => array( 'Authorization' => 'Basic ' . $basic ),
			)
		);
	}
}
