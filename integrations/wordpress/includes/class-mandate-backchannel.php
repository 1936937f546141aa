<?php
/**
 * Back-channel logout (OpenID Connect Back-Channel Logout 1.0) at
 * /wp-json/mandate/v1/backchannel-logout: Mandate POSTs a `logout_token` when the owner removes or
 * blocks the agent, revokes its grant or ends the connection; the WordPress sessions of that sign-in
 * end. 400 for any token that breaks a rule (nothing ends); 503 while Mandate's keys cannot be
 * fetched, so that Mandate sends it again.
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

/**
 * The receiver.
 */
final class Mandate_Backchannel {

	const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

	/** Hooks the route. */
	public static function register(): void {
		add_action( 'rest_api_init', array( __CLASS__, 'routes' ) );
	}

	/** The route; public (the token's signature is the check). */
	public static function routes(): void {
		register_rest_route(
			'mandate/v1',
			'/backchannel-logout',
			array(
				'methods'             => 'POST',
				'callback'            => array( __CLASS__, 'receive' ),
				'permission_callback' => '__return_true',
			)
		);
	}

	/**
	 * Checks the token and ends the sessions it names.
	 *
	 * @param WP_REST_Request $request The request.
	 */
	public static function receive( WP_REST_Request $request ): WP_REST_Response {
		$ctype  = $request->get_content_type();
		$type   = strtolower( (string) ( $ctype['value'] ?? '' ) );
		$tokens = array();
		if ( 'application/x-www-form-urlencoded' === $type ) {
			// Read from the raw body: a repeated field would otherwise silently keep the last one.
			foreach ( explode( '&', (string) $request->get_body() ) as $pair ) {
				$kv = explode( '=', $pair, 2 );
				if ( 'logout_token' === urldecode( $kv[0] ) ) {
					$tokens[] = urldecode( $kv[1] ?? '' );
				}
			}
		}
		if ( 1 !== count( $tokens ) || '' === $tokens[0] ) {
			return self::answer( 400, 'invalid_request', 'send one logout_token, as a form (application/x-www-form-urlencoded)' );
		}
		try {
			$claims = self::check( $tokens[0] );
		} catch ( Mandate_Invalid_Token $e ) {
			error_log( 'mandate: back-channel logout refused: ' . $e->getMessage() ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log
			return self::answer( 400, 'invalid_request', $e->getMessage() );
		} catch ( Mandate_Unavailable $e ) {
			error_log( 'mandate: back-channel logout not checked: ' . $e->getMessage() ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log
			return self::answer( 503, 'temporarily_unavailable', 'Mandate\'s keys cannot be fetched now; send it again later' );
		}
		$ended = self::end_sessions( $claims['sub'] ?? null, $claims['sid'] ?? null );
		error_log( sprintf( 'mandate: back-channel logout: sign-in %s ended (%d sessions)', $claims['sid'] ?? '-', $ended ) ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log
		return self::answer( 200 );
	}

	/**
	 * The claims of a logout token meeting every rule of §2.6, its jti taken once.
	 *
	 * @param string $jwt The logout token.
	 */
	private static function check( string $jwt ): array {
		list( , $claims ) = Mandate_Jwt::verify( $jwt, 'logout+jwt' );
		Mandate_Jwt::check_common( $claims, 300 );
		if ( ! is_string( $claims['jti'] ?? null ) || '' === $claims['jti'] ) {
			throw new Mandate_Invalid_Token( 'missing required "jti"' );
		}
		if ( ! is_array( $claims['events'] ?? null ) || ! is_array( $claims['events'][ self::EVENT ] ?? null ) ) {
			throw new Mandate_Invalid_Token( 'the token lacks the back-channel logout event' );
		}
		if ( array_key_exists( 'nonce', $claims ) ) {
			throw new Mandate_Invalid_Token( 'a logout token must not carry a nonce' );
		}
		$sid = $claims['sid'] ?? null;
		$sub = $claims['sub'] ?? null;
		if ( ! ( is_string( $sid ) && '' !== $sid ) && ! ( is_string( $sub ) && '' !== $sub ) ) {
			throw new Mandate_Invalid_Token( 'the token names neither "sid" nor "sub"' );
		}
		if ( null !== $sid && ! is_string( $sid ) || null !== $sub && ! is_string( $sub ) ) {
			throw new Mandate_Invalid_Token( '"sid" and "sub" must be strings' );
		}
		if ( ! Mandate_Once::add( 'logout-jti:' . $claims['jti'], array(), 600 ) ) {
			throw new Mandate_Invalid_Token( 'the token\'s jti already used' );
		}
		return $claims;
	}

	/**
	 * Ends the sessions of the user linked to `sub` that the sign-in `sid` made (all its Mandate
	 * sign-ins without a sid). Answers how many ended.
	 *
	 * @param string|null $sub The pairwise subject.
	 * @param string|null $sid The sign-in.
	 */
	private static function end_sessions( ?string $sub, ?string $sid ): int {
		$args  = array(
			'fields' => 'ID',
			'number' => 50,
		);
		$users = null === $sub ? get_users( $args + array( 'meta_key' => 'session_tokens', 'meta_compare' => 'EXISTS' ) ) // phpcs:ignore WordPress.DB.SlowDBQuery
			: get_users( $args + array( 'meta_key' => 'mandate_sub', 'meta_value' => $sub ) ); // phpcs:ignore WordPress.DB.SlowDBQuery
		$ended = 0;
		foreach ( $users as $user_id ) {
			$manager = WP_Session_Tokens::get_instance( (int) $user_id );
			if ( ! $manager instanceof WP_User_Meta_Session_Tokens ) {
				// Another session store: its sessions cannot be told apart, so all of them end.
				$manager->destroy_all();
				++$ended;
				continue;
			}
			$sessions = get_user_meta( (int) $user_id, 'session_tokens', true );
			if ( ! is_array( $sessions ) ) {
				continue;
			}
			$kept = array();
			foreach ( $sessions as $verifier => $session ) {
				$ours  = isset( $session['mandate_sid'] ) && ( null === $sub || ( $session['mandate_sub'] ?? null ) === $sub );
				$match = $ours && ( null === $sid || $session['mandate_sid'] === $sid );
				if ( $match ) {
					++$ended;
				} else {
					$kept[ $verifier ] = $session;
				}
			}
			if ( array() === $kept ) {
				delete_user_meta( (int) $user_id, 'session_tokens' );
			} else {
				update_user_meta( (int) $user_id, 'session_tokens', $kept );
			}
		}
		return $ended;
	}

	/**
	 * The answer: 200 empty, or an RFC 6749 style error.
	 *
	 * @param int    $status      HTTP status.
	 * @param string $error       The code.
	 * @param string $description What is wrong.
	 */
	private static function answer( int $status, string $error = '', string $description = '' ): WP_REST_Response {
		$body     = '' === $error ? null : array(
			'error'             => $error,
			'error_description' => $description,
		);
		$response = new WP_REST_Response( $body, $status );
		$response->header( 'Cache-Control', 'no-store' );
		return $response;
	}
}
