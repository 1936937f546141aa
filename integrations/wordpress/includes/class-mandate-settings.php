<?php
/**
 * The plugin's settings (Settings → Mandate) and their parsed forms.
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

/**
 * One option, `mandate_settings`, holding every field; the page under Settings edits it.
 */
final class Mandate_Settings {

	const OPTION = 'mandate_settings';

	const DEFAULTS = array(
		'service_url'   => '',
		'client_id'     => '',
		'client_secret' => '',
		'site_id'       => '',
		'scope_caps'    => '',
		'agent_routes'  => '',
		'ciba_routes'   => '',
		'new_user_role' => 'subscriber',
	);

	/** Hooks the settings page. */
	public static function register(): void {
		add_action( 'admin_init', array( __CLASS__, 'admin_init' ) );
		add_action( 'admin_menu', array( __CLASS__, 'admin_menu' ) );
	}

	/** Every field, with defaults for the missing ones. */
	public static function all(): array {
		$saved = get_option( self::OPTION, array() );
		return array_merge( self::DEFAULTS, is_array( $saved ) ? $saved : array() );
	}

	/** One field. */
	public static function get( string $key ): string {
		return (string) ( self::all()[ $key ] ?? '' );
	}

	/** The service's base URL without a trailing slash, or '' when not set. */
	public static function service_url(): string {
		return rtrim( self::get( 'service_url' ), '/' );
	}

	/** The site id agents ask access for: the setting, else this site's host (with :port when not default). */
	public static function site_id(): string {
		$site = strtolower( trim( self::get( 'site_id' ) ) );
		if ( '' !== $site ) {
			return $site;
		}
		$parts = wp_parse_url( home_url() );
		$host  = strtolower( $parts['host'] ?? '' );
		return isset( $parts['port'] ) ? $host . ':' . $parts['port'] : $host;
	}

	/**
	 * The scope → capabilities map: one `scope = cap, cap` a line.
	 *
	 * @return array<string, string[]>
	 */
	public static function scope_caps(): array {
		$map = array();
		foreach ( self::lines( self::get( 'scope_caps' ) ) as $line ) {
			$parts = explode( '=', $line, 2 );
			if ( 2 !== count( $parts ) ) {
				continue;
			}
			$caps = array_values( array_filter( array_map( 'trim', explode( ',', $parts[1] ) ) ) );
			$map[ trim( $parts[0] ) ] = array_map( 'sanitize_key', $caps );
		}
		return $map;
	}

	/**
	 * Non-empty, non-comment lines of a text field.
	 *
	 * @return string[]
	 */
	public static function lines( string $text ): array {
		$lines = array_map( 'trim', preg_split( '/\R/', $text ) ?: array() );
		return array_values( array_filter( $lines, static fn( $l ) => '' !== $l && '#' !== $l[0] ) );
	}

	/** Where Mandate sends the agent back after sign-in: register it as the client's redirect URI. */
	public static function redirect_uri(): string {
		return rest_url( 'mandate/v1/callback' );
	}

	/** Where Mandate posts logout tokens: register it as the client's back-channel logout URI. */
	public static function backchannel_logout_uri(): string {
		return rest_url( 'mandate/v1/backchannel-logout' );
	}

	/** Registers the option and its fields. */
	public static function admin_init(): void {
		register_setting(
			'mandate',
			self::OPTION,
			array(
				'type'              => 'array',
				'sanitize_callback' => array( __CLASS__, 'sanitize' ),
				'default'           => self::DEFAULTS,
			)
		);
		add_settings_section( 'mandate_main', __( 'Mandate service', 'mandate' ), array( __CLASS__, 'section_intro' ), 'mandate' );
		$fields = array(
			'service_url'   => array( __( 'Service URL', 'mandate' ), 'url', __( 'The Mandate service, e.g. https://mandate.example (no trailing slash).', 'mandate' ) ),
			'client_id'     => array( __( 'OIDC client id', 'mandate' ), 'text', __( 'From registering this site as an OIDC client at Mandate (c_...).', 'mandate' ) ),
			'client_secret' => array( __( 'OIDC client secret', 'mandate' ), 'password', __( 'Shown once by Mandate. Leave empty to keep the saved one.', 'mandate' ) ),
			'site_id'       => array( __( 'Site id', 'mandate' ), 'text', __( 'The site agents ask access for; empty: this site\'s host.', 'mandate' ) ),
			'scope_caps'    => array( __( 'Scopes and capabilities', 'mandate' ), 'textarea', __( 'One "scope = capability, capability" a line: what an agent with a pass holding that scope may do here.', 'mandate' ) ),
			'agent_routes'  => array( __( 'Agent routes', 'mandate' ), 'textarea', __( 'One "METHOD /route [scope] [| step-up action]" a line (route as a REST route regex, e.g. /wp/v2/posts/(?P<id>\d+); METHOD may be * or GET,POST). Such a request needs a pass (401 without), the scope (403 insufficient_scope) and, with an action, the owner\'s step-up for exactly that text (403 stepup_required); {id} in the action is the route\'s id.', 'mandate' ) ),
			'ciba_routes'   => array( __( 'CIBA-confirmed routes', 'mandate' ), 'textarea', __( 'One "METHOD /route | message" a line: an agent signed in with Mandate gets 202 confirmation_pending while its owner is asked to confirm the message, and repeats the request once confirmed.', 'mandate' ) ),
			'new_user_role' => array( __( 'Role of new agent users', 'mandate' ), 'text', __( 'The role given to a WordPress user made for an agent at its first "Sign in with Mandate".', 'mandate' ) ),
		);
		foreach ( $fields as $key => list( $label, $type, $help ) ) {
			add_settings_field(
				$key,
				$label,
				array( __CLASS__, 'field' ),
				'mandate',
				'mandate_main',
				array(
					'key'       => $key,
					'type'      => $type,
					'help'      => $help,
					'label_for' => 'mandate_' . $key,
				)
			);
		}
	}

	/** Adds Settings → Mandate. */
	public static function admin_menu(): void {
		add_options_page( 'Mandate', 'Mandate', 'manage_options', 'mandate', array( __CLASS__, 'page' ) );
	}

	/** The addresses to register at Mandate. */
	public static function section_intro(): void {
		echo '<p>' . esc_html__( 'Register this site at Mandate as an OIDC client with these addresses:', 'mandate' ) . '</p><ul>';
		echo '<li>' . esc_html__( 'Redirect URI', 'mandate' ) . ': <code>' . esc_html( self::redirect_uri() ) . '</code></li>';
		echo '<li>' . esc_html__( 'Back-channel logout URI', 'mandate' ) . ': <code>' . esc_html( self::backchannel_logout_uri() ) . '</code></li>';
		echo '<li>' . esc_html__( 'Agents sign in at', 'mandate' ) . ': <code>' . esc_html( rest_url( 'mandate/v1/sign-in' ) ) . '</code></li></ul>';
	}

	/**
	 * One field's input.
	 *
	 * @param array $args The field's key, type and help.
	 */
	public static function field( array $args ): void {
		$key   = $args['key'];
		$name  = self::OPTION . '[' . $key . ']';
		$id    = 'mandate_' . $key;
		$value = 'client_secret' === $key ? '' : self::get( $key );
		if ( 'textarea' === $args['type'] ) {
			printf( '<textarea id="%s" name="%s" rows="5" cols="70" class="large-text code">%s</textarea>', esc_attr( $id ), esc_attr( $name ), esc_textarea( $value ) );
		} else {
			printf( '<input id="%s" name="%s" type="%s" value="%s" class="regular-text" autocomplete="off" />', esc_attr( $id ), esc_attr( $name ), esc_attr( $args['type'] ), esc_attr( $value ) );
		}
		printf( '<p class="description">%s</p>', esc_html( $args['help'] ) );
	}

	/** The page. */
	public static function page(): void {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		echo '<div class="wrap"><h1>Mandate</h1><form method="post" action="options.php">';
		settings_fields( 'mandate' );
		do_settings_sections( 'mandate' );
		submit_button();
		echo '</form></div>';
	}

	/**
	 * Cleans what the form sent; an empty secret keeps the saved one (it is never shown back).
	 *
	 * @param mixed $input The posted fields.
	 */
	public static function sanitize( $input ): array {
		$input = is_array( $input ) ? $input : array();
		$old   = self::all();
		$out   = array();
		foreach ( self::DEFAULTS as $key => $default ) {
			$value = isset( $input[ $key ] ) ? (string) $input[ $key ] : $old[ $key ]; // options.php unslashed it already.
			switch ( $key ) {
				case 'service_url':
					$value = rtrim( esc_url_raw( trim( $value ), array( 'http', 'https' ) ), '/' );
					break;
				case 'client_secret':
					$value = '' === trim( $value ) ? $old['client_secret'] : trim( $value );
					break;
				case 'scope_caps':
				case 'agent_routes':
				case 'ciba_routes':
					$value = implode( "\n", array_map( 'trim', preg_split( '/\R/', $value ) ?: array() ) );
					break;
				case 'new_user_role':
					$value = sanitize_key( $value );
					break;
				default:
					$value = sanitize_text_field( $value );
			}
			$out[ $key ] = $value;
		}
		return $out;
	}
}
