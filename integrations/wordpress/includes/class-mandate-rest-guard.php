<?php
/**
 * The REST API guard: agent requests carry a Mandate pass (`Authorization: Bearer|DPoP <pass>`) and a
 * `DPoP` proof, checked by Mandate's cloud verify (`POST /api/v1/verify`). Its answers mirror the
 * site SDK (@mandate/site) exactly: 401 `{error, error_description}` for a failed verification, 403
 * `insufficient_scope`, 403 `stepup_required` with the `action`, 503 `service_unavailable` when Mandate
 * gives no verdict (fail closed). The same answer also carries WordPress's `code`, `message` and `data`.
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

/**
 * Verifies agent requests before WordPress dispatches them, and gives the agent's WordPress user
 * exactly the capabilities its pass's scopes map to, for that request only.
 */
final class Mandate_Rest_Guard {

	/** The longest token accepted, as Mandate's verify endpoint and the site SDK. */
	const MAX_TOKEN_LENGTH = 16384;

	/**
	 * The capabilities of the agent verified in this request, by WordPress user id.
	 *
	 * @var array<int, string[]>
	 */
	private static array $granted = array();

	/** Hooks the guard. */
	public static function register(): void {
		add_filter( 'rest_pre_dispatch', array( __CLASS__, 'guard' ), 10, 3 );
		add_filter( 'user_has_cap', array( __CLASS__, 'capabilities' ), 1000, 4 );
	}

	/**
	 * Before dispatch: verifies a request that carries a pass, or that an agent route needs one to.
	 * Null lets WordPress go on; a response ends the request.
	 *
	 * @param mixed           $result  An earlier filter's answer.
	 * @param WP_REST_Server  $server  The server.
	 * @param WP_REST_Request $request The request.
	 * @return mixed
	 */
	public static function guard( $result, $server, $request ) {
		if ( null !== $result ) {
			return $result;
		}
		$route   = Mandate_Routes::match( 'agent_routes', $request );
		$auth    = (string) $request->get_header( 'authorization' );
		$dpop    = $request->get_header( 'dpop' );
		$carries = null !== $dpop || 1 === preg_match( '/^dpop\s/i', $auth );
		if ( null === $route && ! $carries ) {
			return null; // Not an agent request: WordPress's own rules.
		}
		if ( ! $carries && is_user_logged_in() && '' === (string) get_user_meta( get_current_user_id(), 'mandate_agent_id', true ) ) {
			return null; // A person signed in to WordPress (cookie and nonce, application password): not an agent.
		}
		if ( $carries && str_starts_with( untrailingslashit( $request->get_route() ), '/batch/v1' ) ) {
			return self::refusal( 400, 'invalid_request', 'send agent requests one by one: a pass and its proof are for one request, not a batch' );
		}
		$scope  = $route['scope'] ?? '';
		$action = '' === ( $route['text'] ?? '' ) ? null : $route['text'];
		if ( null !== $action && ( strlen( $action ) > 200 || ! preg_match( '/^[\x20-\x7e\x{a0}-\x{10ffff}]+$/u', $action ) ) ) {
			return self::refusal( 400, 'invalid_request', 'the action of this request is not a valid step-up action (1 to 200 printable characters)' );
		}
		if ( ! preg_match( '/^(bearer|dpop)\s+(\S+)$/i', trim( $auth ), $m ) ) {
			return self::refusal( 401, 'invalid_request', 'no Mandate pass in this request: send Authorization: Bearer <pass> and DPoP: <proof>' );
		}
		$pass = $m[2];
		if ( strlen( $pass ) > self::MAX_TOKEN_LENGTH ) {
			return self::refusal( 401, 'invalid_token', 'the access token is too long' );
		}
		$dpop = trim( (string) $dpop );
		if ( '' === $dpop ) {
			return self::refusal( 401, 'invalid_dpop', 'the DPoP proof is missing' );
		}
		if ( str_contains( $dpop, ',' ) ) {
			return self::refusal( 401, 'invalid_dpop', 'send exactly one DPoP proof' ); // PHP joins repeated headers with commas.
		}
		if ( strlen( $dpop ) > self::MAX_TOKEN_LENGTH ) {
			return self::refusal( 401, 'invalid_dpop', 'the DPoP proof is too long' );
		}
		$body = array(
			'access_token' => $pass,
			'dpop'         => $dpop,
			'method'       => self::http_method(),
			'url'          => self::public_url(),
			'site'         => Mandate_Settings::site_id(),
		);
		if ( null !== $action ) {
			$stepup = self::stepup_token( $request );
			if ( false === $stepup ) {
				return self::refusal( 401, 'stepup_invalid', 'send exactly one step-up token, in X-Service-Stepup (or X-AuthYourAgent-Stepup)' );
			}
			if ( null !== $stepup && strlen( $stepup ) > self::MAX_TOKEN_LENGTH ) {
				return self::refusal( 401, 'stepup_invalid', 'the step-up token is too long' );
			}
			// Mandate uses a step-up up when it accepts it: not sent when the pass plainly lacks the scope.
			if ( null !== $stepup && ( '' === $scope || in_array( $scope, self::claimed_scopes( $pass ), true ) ) ) {
				$body['stepup_token'] = $stepup;
				$body['action']       = $action;
			}
		}
		try {
			$verdict = self::verify( $body );
		} catch ( Mandate_Unavailable $e ) {
			error_log( 'mandate: ' . $e->getMessage() ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log -- the site's log; holds no token.
			return self::refusal( 503, 'service_unavailable', 'the request cannot be verified right now (Mandate cannot be reached); try again later' );
		}
		if ( isset( $verdict['error'] ) ) {
			return self::refusal( 401, $verdict['error'], $verdict['error_description'] );
		}
		if ( '' !== $scope && ! in_array( $scope, $verdict['scopes'], true ) ) {
			return self::refusal( 403, 'insufficient_scope', "this route needs the scope $scope" );
		}
		if ( null !== $action && true !== $verdict['stepup'] ) {
			return self::refusal( 403, 'stepup_required', 'this action needs a step-up approval by the owner, sent in X-Service-Stepup', array( 'action' => $action ) );
		}
		$user_id = self::agent_user( $verdict['agent_id'], $verdict['agent_name'] );
		if ( 0 === $user_id ) {
			return self::refusal( 503, 'service_unavailable', 'the request cannot be verified right now (an internal error); try again later' );
		}
		self::$granted[ $user_id ] = self::caps_of( $verdict['scopes'] );
		wp_set_current_user( $user_id );
		$GLOBALS['mandate_verified'] = $verdict; // phpcs:ignore WordPress.WP.GlobalVariablesOverride -- read by the site's own code: who called, for which person.
		return null;
	}

	/**
	 * The verified agent's capabilities replace its user's (it has no role): only what its scopes map to.
	 *
	 * @param array   $allcaps The user's capabilities.
	 * @param array   $caps    Asked.
	 * @param array   $args    Arguments.
	 * @param WP_User $user    The user.
	 */
	public static function capabilities( $allcaps, $caps, $args, $user ): array {
		if ( ! $user instanceof WP_User || '' === (string) get_user_meta( $user->ID, 'mandate_agent_id', true ) ) {
			return $allcaps;
		}
		// An agent's user has capabilities only inside a request its pass verified.
		return array_fill_keys( self::$granted[ $user->ID ] ?? array(), true );
	}

	/**
	 * The capabilities mapped from scopes.
	 *
	 * @param string[] $scopes The pass's scopes.
	 * @return string[]
	 */
	private static function caps_of( array $scopes ): array {
		$map  = Mandate_Settings::scope_caps();
		$caps = array();
		foreach ( $scopes as $scope ) {
			$caps = array_merge( $caps, $map[ $scope ] ?? array() );
		}
		return array_values( array_unique( $caps ) );
	}

	/**
	 * Cloud verify. The verdict: `{error, error_description}`, or the checked success fields.
	 *
	 * @param array $body The request body.
	 */
	private static function verify( array $body ): array {
		list( $status, $answer ) = Mandate_Http::call( 'POST', Mandate_Http::service() . '/api/v1/verify', array( 'json' => $body ) );
		if ( 200 !== $status || ! is_array( $answer ) ) {
			throw new Mandate_Unavailable( "POST /api/v1/verify answered $status" );
		}
		if ( false === ( $answer['valid'] ?? null ) ) {
			if ( ! is_string( $answer['error'] ?? null ) || ! preg_match( '/^[a-z_]{1,40}$/', $answer['error'] ) ) {
				throw new Mandate_Unavailable( 'POST /api/v1/verify: the answer has an unknown error code' );
			}
			return array(
				'error'             => $answer['error'],
				'error_description' => is_string( $answer['error_description'] ?? null ) ? $answer['error_description'] : $answer['error'],
			);
		}
		$strings = array_filter( array( 'agent_id', 'agent_name', 'user_id' ), static fn( $k ) => ! is_string( $answer[ $k ] ?? null ) );
		if (
			true !== ( $answer['valid'] ?? null ) || array() !== $strings || ( $answer['site'] ?? null ) !== $body['site'] ||
			! is_array( $answer['scopes'] ?? null ) || ! is_bool( $answer['stepup'] ?? null ) || ! preg_match( '/^ag_[A-Za-z0-9_-]+$/', $answer['agent_id'] )
		) {
			throw new Mandate_Unavailable( 'POST /api/v1/verify: the answer does not match the contract' );
		}
		$answer['scopes'] = array_values( array_filter( $answer['scopes'], 'is_string' ) );
		return $answer;
	}

	/**
	 * The WordPress user standing for an agent: made at its first verified request, without a role
	 * (its capabilities come from its pass alone), its login derived from the agent id so that two
	 * first requests at once make one user.
	 *
	 * @param string $agent_id   The agent.
	 * @param string $agent_name Its name, as its owner wrote it.
	 */
	private static function agent_user( string $agent_id, string $agent_name ): int {
		$login = 'mandate-' . substr( hash( 'sha256', $agent_id ), 0, 16 );
		$user  = get_user_by( 'login', $login );
		if ( ! $user ) {
			$id = wp_insert_user(
				array(
					'user_login'   => $login,
					'user_pass'    => wp_generate_password( 40, true, true ),
					'display_name' => sanitize_text_field( $agent_name ),
					'nickname'     => sanitize_text_field( $agent_name ),
					'role'         => '',
				)
			);
			if ( is_wp_error( $id ) ) {
				$user = get_user_by( 'login', $login ); // Made by a concurrent first request.
				if ( ! $user ) {
					error_log( 'mandate: cannot make the user of agent ' . $agent_id . ': ' . $id->get_error_message() ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log
					return 0;
				}
			} else {
				$user = get_user_by( 'id', $id );
			}
		}
		update_user_meta( $user->ID, 'mandate_agent_id', $agent_id );
		return (int) $user->ID;
	}

	/** The request method as sent (the DPoP proof signs it, not an override). */
	private static function http_method(): string {
		return strtoupper( sanitize_text_field( wp_unslash( $_SERVER['REQUEST_METHOD'] ?? 'GET' ) ) );
	}

	/**
	 * The URL the agent called: this site's configured origin (home URL's scheme, host and port) and the
	 * path it requested. Host headers are not trusted; Mandate ignores the query.
	 */
	private static function public_url(): string {
		$home   = wp_parse_url( home_url() );
		$origin = ( $home['scheme'] ?? 'https' ) . '://' . ( $home['host'] ?? '' ) . ( isset( $home['port'] ) ? ':' . $home['port'] : '' );
		return $origin . ( $_SERVER['REQUEST_URI'] ?? '/' ); // phpcs:ignore WordPress.Security.ValidatedSanitizedInput -- compared byte for byte by Mandate with the proof's htu.
	}

	/**
	 * The step-up token: null when none, false when both headers (or a repeated one) came.
	 *
	 * @param WP_REST_Request $request The request.
	 * @return string|null|false
	 */
	private static function stepup_token( WP_REST_Request $request ) {
		$ours   = trim( (string) $request->get_header( 'x-service-stepup' ) );
		$legacy = trim( (string) $request->get_header( 'x-authyouragent-stepup' ) );
		if ( '' !== $ours && '' !== $legacy ) {
			return false;
		}
		$token = '' !== $ours ? $ours : $legacy;
		if ( str_contains( $token, ',' ) ) {
			return false;
		}
		return '' === $token ? null : $token;
	}

	/**
	 * The scopes the pass claims, unverified: only used to decide not to send a step-up.
	 *
	 * @param string $pass The pass.
	 * @return string[]
	 */
	private static function claimed_scopes( string $pass ): array {
		$parts  = explode( '.', $pass );
		$claims = json_decode( (string) Mandate_Jwt::b64url_decode( $parts[1] ?? '' ), true );
		return is_array( $claims['scope'] ?? null ) ? array_filter( $claims['scope'], 'is_string' ) : array();
	}

	/**
	 * A refusal as the site SDK answers it, with WordPress's error fields beside.
	 *
	 * @param int    $status      HTTP status.
	 * @param string $error       The code.
	 * @param string $description What is wrong, in words.
	 * @param array  $extra       More fields (the step-up's `action`).
	 */
	public static function refusal( int $status, string $error, string $description, array $extra = array() ): WP_REST_Response {
		$response = new WP_REST_Response(
			array_merge(
				array(
					'error'             => $error,
					'error_description' => $description,
				),
				$extra,
				array(
					'code'    => $error,
					'message' => $description,
					'data'    => array( 'status' => $status ),
				)
			),
			$status
		);
		$response->header( 'Cache-Control', 'no-store' );
		return $response;
	}
}
