<?php
/**
 * "Sign in with Mandate" for agents: the OpenID Connect code flow with PKCE S256 against Mandate, the
 * WordPress user linked to the pairwise `sub` of the ID token, and each WordPress session marked with
 * the sign-in's `sid` so that a back-channel logout ends exactly it.
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

/**
 * GET /wp-json/mandate/v1/sign-in starts, GET /wp-json/mandate/v1/callback finishes.
 */
final class Mandate_Sign_In {

	/** The browser cookie that binds a sign-in to the browser (agent) that started it. */
	const COOKIE = 'mandate_sign_in';

	/** Seconds a started sign-in may take (the owner may have to approve the first one). */
	const TTL = 900;

	/**
	 * The sign-in being finished, attached to the WordPress session it makes.
	 *
	 * @var array{sid:string,sub:string}|null
	 */
	private static ?array $signing_in = null;

	/** Hooks the routes, the session marker and the link on the login form. */
	public static function register(): void {
		add_action( 'rest_api_init', array( __CLASS__, 'routes' ) );
		add_filter( 'attach_session_information', array( __CLASS__, 'mark_session' ) );
		add_action( 'login_form', array( __CLASS__, 'login_link' ) );
	}

	/** The two routes; both public (the flow itself is the check). */
	public static function routes(): void {
		register_rest_route(
			'mandate/v1',
			'/sign-in',
			array(
				'methods'             => 'GET',
				'callback'            => array( __CLASS__, 'start' ),
				'permission_callback' => '__return_true',
			)
		);
		register_rest_route(
			'mandate/v1',
			'/callback',
			array(
				'methods'             => 'GET',
				'callback'            => array( __CLASS__, 'finish' ),
				'permission_callback' => '__return_true',
			)
		);
	}

	/** "Sign in with Mandate" under the login form. */
	public static function login_link(): void {
		printf( '<p style="margin:1em 0"><a class="button" href="%s">%s</a></p>', esc_url( rest_url( 'mandate/v1/sign-in' ) ), esc_html__( 'Sign in with Mandate (agents)', 'mandate' ) );
	}

	/**
	 * Starts a sign-in: state, nonce and PKCE verifier kept here (once), the state in a cookie too,
	 * and a redirect to Mandate's authorize endpoint.
	 *
	 * @param WP_REST_Request $request The request.
	 */
	public static function start( WP_REST_Request $request ): WP_REST_Response {
		try {
			$authorize = (string) Mandate_Http::discovery()['authorization_endpoint'];
		} catch ( Mandate_Unavailable $e ) {
			return self::failure( 503, 'temporarily_unavailable', $e->getMessage() );
		}
		$client_id = Mandate_Settings::get( 'client_id' );
		if ( '' === $client_id ) {
			return self::failure( 503, 'temporarily_unavailable', 'the Mandate plugin has no OIDC client id: set it under Settings → Mandate' );
		}
		$state    = self::random();
		$verifier = self::random();
		$nonce    = self::random();
		$asked    = (string) $request->get_param( 'redirect_to' );
		$back     = '' === $asked ? admin_url() : wp_validate_redirect( $asked, admin_url() );
		Mandate_Once::add(
			'sign-in:' . $state,
			array(
				'verifier'    => $verifier,
				'nonce'       => $nonce,
				'redirect_to' => $back,
			),
			self::TTL
		);
		$query = http_build_query(
			array(
				'response_type'         => 'code',
				'client_id'             => $client_id,
				'redirect_uri'          => Mandate_Settings::redirect_uri(),
				'scope'                 => 'openid profile',
				'state'                 => $state,
				'nonce'                 => $nonce,
				'code_challenge'        => rtrim( strtr( base64_encode( hash( 'sha256', $verifier, true ) ), '+/', '-_' ), '=' ), // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_encode
				'code_challenge_method' => 'S256',
			),
			'',
			'&',
			PHP_QUERY_RFC3986
		);
		setcookie(
			self::COOKIE,
			$state,
			array(
				'expires'  => time() + self::TTL,
				'path'     => '/',
				'secure'   => is_ssl(),
				'httponly' => true,
				'samesite' => 'Lax',
			)
		);
		$response = new WP_REST_Response( null, 302 );
		$response->header( 'Location', $authorize . ( str_contains( $authorize, '?' ) ? '&' : '?' ) . $query );
		$response->header( 'Cache-Control', 'no-store' );
		return $response;
	}

	/**
	 * Finishes a sign-in: the state taken once and matched with the cookie, the code redeemed with the
	 * verifier, the ID token checked, the user found by its pairwise `sub` (or made), signed in.
	 *
	 * @param WP_REST_Request $request The request.
	 */
	public static function finish( WP_REST_Request $request ): WP_REST_Response {
		$state  = (string) $request->get_param( 'state' );
		$cookie = (string) ( $_COOKIE[ self::COOKIE ] ?? '' ); // phpcs:ignore WordPress.Security.ValidatedSanitizedInput -- compared only.
		if ( '' === $state || ! hash_equals( $cookie, $state ) ) {
			return self::failure( 400, 'invalid_request', 'this sign-in was not started in this browser (its state does not match the cookie); start again' );
		}
		$started = Mandate_Once::take( 'sign-in:' . $state );
		if ( null === $started ) {
			return self::failure( 400, 'invalid_request', 'this sign-in is unknown, expired or already finished; start again' );
		}
		$iss = $request->get_param( 'iss' );
		if ( null !== $iss && $iss !== Mandate_Settings::service_url() ) {
			return self::failure( 400, 'invalid_request', 'the answer names another issuer than the Mandate service (RFC 9207)' );
		}
		$error = $request->get_param( 'error' );
		if ( null !== $error ) {
			$status = 'access_denied' === $error ? 403 : 400;
			return self::failure( $status, sanitize_key( (string) $error ), 'access_denied' === $error ? 'the owner declined this sign-in' : 'Mandate refused the sign-in: ' . sanitize_text_field( (string) $request->get_param( 'error_description' ) ) );
		}
		$code = (string) $request->get_param( 'code' );
		if ( '' === $code || strlen( $code ) > 2048 ) {
			return self::failure( 400, 'invalid_request', 'the answer carries no code' );
		}
		try {
			list( $status, $tokens ) = Mandate_Http::client_post(
				'token_endpoint',
				array(
					'grant_type'    => 'authorization_code',
					'code'          => $code,
					'redirect_uri'  => Mandate_Settings::redirect_uri(),
					'code_verifier' => $started['verifier'],
				)
			);
			if ( 200 !== $status || ! is_string( $tokens['id_token'] ?? null ) ) {
				$why = is_string( $tokens['error'] ?? null ) ? $tokens['error'] . ' ' . ( $tokens['error_description'] ?? '' ) : "status $status";
				return self::failure( 400, 'invalid_grant', 'Mandate did not redeem the code: ' . sanitize_text_field( $why ) );
			}
			$claims = self::id_token( $tokens['id_token'], $started['nonce'] );
		} catch ( Mandate_Unavailable $e ) {
			return self::failure( 503, 'temporarily_unavailable', $e->getMessage() );
		} catch ( Mandate_Invalid_Token $e ) {
			return self::failure( 400, 'invalid_token', 'the ID token is not valid: ' . $e->getMessage() );
		}
		$user_id = self::linked_user( $claims );
		if ( is_wp_error( $user_id ) ) {
			return self::failure( 500, 'server_error', 'no WordPress user for this agent: ' . $user_id->get_error_message() );
		}
		self::$signing_in = array(
			'sid' => (string) $claims['sid'],
			'sub' => (string) $claims['sub'],
		);
		wp_set_auth_cookie( $user_id, false, is_ssl() );
		self::$signing_in = null;
		setcookie( self::COOKIE, '', array( 'expires' => time() - 3600, 'path' => '/' ) );
		$response = new WP_REST_Response( null, 302 );
		$response->header( 'Location', wp_validate_redirect( $started['redirect_to'], admin_url() ) );
		$response->header( 'Cache-Control', 'no-store' );
		return $response;
	}

	/**
	 * The ID token's claims once every rule holds (Core 1.0 §3.1.3.7).
	 *
	 * @param string $jwt   The ID token.
	 * @param string $nonce The nonce sent.
	 */
	public static function id_token( string $jwt, ?string $nonce ): array {
		list( , $claims ) = Mandate_Jwt::verify( $jwt, '' );
		Mandate_Jwt::check_common( $claims, 900 );
		if ( null !== $nonce && ( ! is_string( $claims['nonce'] ?? null ) || ! hash_equals( $nonce, $claims['nonce'] ) ) ) {
			throw new Mandate_Invalid_Token( 'the ID token\'s "nonce" is not the one sent' );
		}
		if ( ! is_string( $claims['sub'] ?? null ) || '' === $claims['sub'] || ! is_string( $claims['sid'] ?? null ) ) {
			throw new Mandate_Invalid_Token( 'the ID token has no "sub" or "sid"' );
		}
		return $claims;
	}

	/**
	 * The user linked to the pairwise `sub`; made at the first sign-in with the role of the settings.
	 *
	 * @param array $claims The ID token's claims.
	 * @return int|WP_Error
	 */
	private static function linked_user( array $claims ) {
		$found = get_users(
			array(
				'meta_key'   => 'mandate_sub', // phpcs:ignore WordPress.DB.SlowDBQuery
				'meta_value' => $claims['sub'], // phpcs:ignore WordPress.DB.SlowDBQuery
				'number'     => 1,
				'fields'     => 'ID',
			)
		);
		$name   = is_string( $claims['name'] ?? null ) ? sanitize_text_field( $claims['name'] ) : 'Mandate agent';
		$act    = is_array( $claims['act'] ?? null ) && is_string( $claims['act']['sub'] ?? null ) ? $claims['act']['sub'] : '';
		if ( $found ) {
			$id = (int) $found[0];
		} else {
			$role = Mandate_Settings::get( 'new_user_role' );
			$id   = wp_insert_user(
				array(
					'user_login'   => 'mandate-' . substr( hash( 'sha256', $claims['sub'] ), 0, 16 ),
					'user_pass'    => wp_generate_password( 40, true, true ),
					'display_name' => $name,
					'nickname'     => $name,
					'role'         => null !== get_role( $role ) ? $role : 'subscriber',
				)
			);
			if ( is_wp_error( $id ) ) {
				return $id;
			}
			update_user_meta( $id, 'mandate_sub', $claims['sub'] );
		}
		// The agent's pairwise id at this site: CIBA asks its owner with it (login_hint).
		if ( '' !== $act ) {
			update_user_meta( $id, 'mandate_act_sub', $act );
		}
		return $id;
	}

	/**
	 * Marks the session being made with the sign-in's sid and sub.
	 *
	 * @param array $session The session's information.
	 */
	public static function mark_session( $session ): array {
		$session = is_array( $session ) ? $session : array();
		if ( null !== self::$signing_in ) {
			$session['mandate_sid'] = self::$signing_in['sid'];
			$session['mandate_sub'] = self::$signing_in['sub'];
		}
		return $session;
	}

	/**
	 * A failed sign-in, readable by a person and by a program.
	 *
	 * @param int    $status      HTTP status.
	 * @param string $error       The code.
	 * @param string $description What happened.
	 */
	private static function failure( int $status, string $error, string $description ): WP_REST_Response {
		return Mandate_Rest_Guard::refusal( $status, $error, $description );
	}

	/** 32 random bytes, base64url. */
	private static function random(): string {
		return rtrim( strtr( base64_encode( random_bytes( 32 ) ), '+/', '-_' ), '=' ); // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_encode
	}
}
