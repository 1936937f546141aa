<?php
/**
 * CIBA confirmation of configured actions: a request of an agent signed in with Mandate to a route of
 * "CIBA-confirmed routes" runs only after its owner confirmed the route's message on their phone
 * (Client-Initiated Backchannel Authentication, poll mode, decisions §12 and §18). It never blocks
 * the web server: the first request starts the confirmation and is answered 202
 * `confirmation_pending` with Retry-After; the agent sends the same request again; once Mandate
 * issues the tokens (checked like a sign-in's ID token, for the same person) the request runs, and the
 * confirmation is used up with it.
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

/**
 * The confirmation step, before dispatch (after the REST guard).
 */
final class Mandate_Ciba {

	const GRANT = 'urn:openid:params:grant-type:ciba';

	/** Hooks the check. */
	public static function register(): void {
		add_filter( 'rest_pre_dispatch', array( __CLASS__, 'confirm' ), 20, 3 );
	}

	/**
	 * Null lets the request run (no confirmation needed, or the owner confirmed); a response ends it.
	 *
	 * @param mixed           $result  An earlier filter's answer.
	 * @param WP_REST_Server  $server  The server.
	 * @param WP_REST_Request $request The request.
	 * @return mixed
	 */
	public static function confirm( $result, $server, $request ) {
		if ( null !== $result ) {
			return $result;
		}
		$route = Mandate_Routes::match( 'ciba_routes', $request );
		if ( null === $route ) {
			return null;
		}
		$user_id = get_current_user_id();
		$act_sub = (string) get_user_meta( $user_id, 'mandate_act_sub', true );
		$sub     = (string) get_user_meta( $user_id, 'mandate_sub', true );
		if ( 0 === $user_id || '' === $act_sub || '' === $sub ) {
			return null; // Not an agent signed in with Mandate: WordPress's own rules apply.
		}
		$message = '' === $route['text'] ? 'Confirm ' . $request->get_method() . ' ' . $request->get_route() : $route['text'];
		$key     = 'ciba:' . $user_id . ':' . strtoupper( $request->get_method() ) . ' ' . $request->get_route();
		try {
			$pending = Mandate_Once::peek( $key );
			if ( null === $pending ) {
				return self::start( $key, $act_sub, $message );
			}
			return self::poll( $key, $pending, $sub, $act_sub );
		} catch ( Mandate_Unavailable $e ) {
			error_log( 'mandate: CIBA: ' . $e->getMessage() ); // phpcs:ignore WordPress.PHP.DevelopmentFunctions.error_log_error_log
			return Mandate_Rest_Guard::refusal( 503, 'service_unavailable', 'the owner cannot be asked to confirm right now (Mandate cannot be reached); try again later' );
		}
	}

	/**
	 * Asks Mandate to have the owner confirm; 202 while they decide.
	 *
	 * @param string $key     The pending record's key.
	 * @param string $act_sub The agent's pairwise id here.
	 * @param string $message What the owner reads, as written.
	 */
	private static function start( string $key, string $act_sub, string $message ) {
		list( $status, $answer ) = Mandate_Http::client_post(
			'backchannel_authentication_endpoint',
			array(
				'scope'           => 'openid',
				'login_hint'      => $act_sub,
				'binding_message' => $message,
			)
		);
		if ( 200 !== $status || ! is_string( $answer['auth_req_id'] ?? null ) ) {
			$error = is_string( $answer['error'] ?? null ) ? $answer['error'] : 'confirmation_failed';
			$what  = is_string( $answer['error_description'] ?? null ) ? $answer['error_description'] : "Mandate answered $status";
			return Mandate_Rest_Guard::refusal( 429 === $status ? 429 : 403, 'confirmation_failed', "the owner cannot be asked to confirm: $error ($what)" );
		}
		$interval = max( 1, (int) ( $answer['interval'] ?? 5 ) );
		$record   = array(
			'auth_req_id' => $answer['auth_req_id'],
			'interval'    => $interval,
			'next_poll'   => time() + $interval,
		);
		Mandate_Once::add( $key, $record, max( 60, (int) ( $answer['expires_in'] ?? 300 ) ) );
		return self::pending( $interval, $message );
	}

	/**
	 * Polls Mandate once (no sooner than the interval): 202 while pending, 403 when declined or expired,
	 * null (run) once confirmed for this person, the confirmation taken with it.
	 *
	 * @param string $key     The pending record's key.
	 * @param array  $pending The record.
	 * @param string $sub     The person's pairwise id here.
	 * @param string $act_sub The agent's pairwise id here.
	 */
	private static function poll( string $key, array $pending, string $sub, string $act_sub ) {
		$wait = (int) $pending['next_poll'] - time();
		if ( $wait > 0 ) {
			return self::pending( $wait, '' );
		}
		list( $status, $answer ) = Mandate_Http::client_post(
			'token_endpoint',
			array(
				'grant_type'  => self::GRANT,
				'auth_req_id' => $pending['auth_req_id'],
			)
		);
		$error = is_string( $answer['error'] ?? null ) ? $answer['error'] : '';
		if ( 'authorization_pending' === $error || 'slow_down' === $error ) {
			$interval = (int) $pending['interval'] + ( 'slow_down' === $error ? 5 : 0 );
			Mandate_Once::replace( $key, $pending, array_merge( $pending, array( 'interval' => $interval, 'next_poll' => time() + $interval ) ) );
			return self::pending( $interval, '' );
		}
		if ( 200 !== $status || ! is_string( $answer['id_token'] ?? null ) ) {
			Mandate_Once::delete( $key );
			$denied = 'access_denied' === $error;
			return Mandate_Rest_Guard::refusal( 403, $denied ? 'confirmation_denied' : 'confirmation_expired', $denied ? 'the owner declined this action' : "the confirmation ended without an answer ($error); send the request again to ask anew" );
		}
		try {
			$claims = Mandate_Sign_In::id_token( $answer['id_token'], null );
		} catch ( Mandate_Invalid_Token $e ) {
			Mandate_Once::delete( $key );
			return Mandate_Rest_Guard::refusal( 403, 'confirmation_failed', 'the confirmation\'s ID token is not valid: ' . $e->getMessage() );
		}
		if ( ! hash_equals( $sub, (string) $claims['sub'] ) ) {
			Mandate_Once::delete( $key );
			return Mandate_Rest_Guard::refusal( 403, 'confirmation_failed', 'the confirmation came from another person than this agent\'s owner' );
		}
		// The confirmation must also be for this agent: the same person's other agent is not this one.
		$act = is_array( $claims['act'] ?? null ) ? $claims['act'] : array();
		if ( ! hash_equals( $act_sub, (string) ( $act['sub'] ?? '' ) ) ) {
			Mandate_Once::delete( $key );
			return Mandate_Rest_Guard::refusal( 403, 'confirmation_failed', 'the confirmation was for another agent than this one' );
		}
		// Of two requests that both saw the tokens, only the one that takes the record runs.
		if ( null === Mandate_Once::take( $key ) ) {
			return Mandate_Rest_Guard::refusal( 409, 'confirmation_used', 'this confirmation was used by another request; send the request again to ask anew' );
		}
		return null;
	}

	/**
	 * 202 with Retry-After.
	 *
	 * @param int    $seconds When to send the request again.
	 * @param string $message The message the owner reads ('' when already told).
	 */
	private static function pending( int $seconds, string $message ): WP_REST_Response {
		$text     = 'the owner is asked to confirm this action' . ( '' === $message ? '' : ": \"$message\"" ) . "; send the same request again in $seconds s";
		$response = Mandate_Rest_Guard::refusal( 202, 'confirmation_pending', $text, array( 'retry_after' => $seconds ) );
		$response->header( 'Retry-After', (string) $seconds );
		return $response;
	}
}
