<?php
/**
 * Short-lived records taken at most once (sign-in states, logout token ids, CIBA requests), kept in
 * the options table with plain SQL: INSERT IGNORE and DELETE are atomic in the database, so of two
 * concurrent requests exactly one creates or takes a record. get_option and its caches are never used
 * for them.
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

/**
 * `mandate_once_<name>` options holding JSON with an `exp` (Unix time).
 */
final class Mandate_Once {

	const PREFIX = 'mandate_once_';
	const CRON   = 'mandate_once_purge';

	/** Hooks the hourly purge of expired records. */
	public static function register(): void {
		add_action( self::CRON, array( __CLASS__, 'purge' ) );
	}

	/** Schedules the purge (plugin activation). */
	public static function schedule(): void {
		if ( ! wp_next_scheduled( self::CRON ) ) {
			wp_schedule_event( time() + 3600, 'hourly', self::CRON );
		}
	}

	/** Unschedules it (deactivation). */
	public static function unschedule(): void {
		wp_clear_scheduled_hook( self::CRON );
	}

	/** The option name of a record (hashed: names are at most 191 characters and may come from outside). */
	private static function name( string $key ): string {
		return self::PREFIX . hash( 'sha256', $key );
	}

	/**
	 * Creates a record unless one exists: true when this call created it.
	 *
	 * @param string $key   The record's key.
	 * @param array  $value What it holds.
	 * @param int    $ttl   Seconds to live.
	 */
	public static function add( string $key, array $value, int $ttl ): bool {
		global $wpdb;
		$name = self::name( $key );
		$old  = self::peek( $key );
		if ( null === $old && self::exists( $name ) ) {
			// An expired record of the same key: gone before the new one is added.
			$wpdb->query( $wpdb->prepare( "DELETE FROM {$wpdb->options} WHERE option_name = %s", $name ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
		}
		$value['exp'] = time() + $ttl;
		$done         = $wpdb->query( $wpdb->prepare( "INSERT IGNORE INTO {$wpdb->options} (option_name, option_value, autoload) VALUES (%s, %s, 'no')", $name, wp_json_encode( $value ) ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
		return 1 === $done;
	}

	/**
	 * A live record without taking it, or null.
	 *
	 * @param string $key The record's key.
	 */
	public static function peek( string $key ): ?array {
		global $wpdb;
		$raw = $wpdb->get_var( $wpdb->prepare( "SELECT option_value FROM {$wpdb->options} WHERE option_name = %s", self::name( $key ) ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
		$value = is_string( $raw ) ? json_decode( $raw, true ) : null;
		return is_array( $value ) && (int) ( $value['exp'] ?? 0 ) > time() ? $value : null;
	}

	/**
	 * Takes a live record: the one call that deletes it gets it; every other gets null.
	 *
	 * @param string $key The record's key.
	 */
	public static function take( string $key ): ?array {
		global $wpdb;
		$name = self::name( $key );
		$raw  = $wpdb->get_var( $wpdb->prepare( "SELECT option_value FROM {$wpdb->options} WHERE option_name = %s", $name ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
		if ( ! is_string( $raw ) ) {
			return null;
		}
		$deleted = $wpdb->query( $wpdb->prepare( "DELETE FROM {$wpdb->options} WHERE option_name = %s AND option_value = %s", $name, $raw ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
		$value   = json_decode( $raw, true );
		return 1 === $deleted && is_array( $value ) && (int) ( $value['exp'] ?? 0 ) > time() ? $value : null;
	}

	/**
	 * Replaces a record's value if it still holds `$old` (compare and set); keeps its expiry.
	 *
	 * @param string $key The record's key.
	 * @param array  $old The value read.
	 * @param array  $new The value to hold.
	 */
	public static function replace( string $key, array $old, array $new ): bool {
		global $wpdb;
		$new['exp'] = $old['exp'];
		$done       = $wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->options} SET option_value = %s WHERE option_name = %s AND option_value = %s", wp_json_encode( $new ), self::name( $key ), wp_json_encode( $old ) ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
		return 1 === $done;
	}

	/**
	 * Deletes a record.
	 *
	 * @param string $key The record's key.
	 */
	public static function delete( string $key ): void {
		global $wpdb;
		$wpdb->query( $wpdb->prepare( "DELETE FROM {$wpdb->options} WHERE option_name = %s", self::name( $key ) ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
	}

	/** Deletes expired records. */
	public static function purge(): void {
		global $wpdb;
		$rows = $wpdb->get_results( $wpdb->prepare( "SELECT option_name, option_value FROM {$wpdb->options} WHERE option_name LIKE %s", $wpdb->esc_like( self::PREFIX ) . '%' ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
		foreach ( $rows as $row ) {
			$value = json_decode( $row->option_value, true );
			if ( (int) ( $value['exp'] ?? 0 ) <= time() ) {
				$wpdb->query( $wpdb->prepare( "DELETE FROM {$wpdb->options} WHERE option_name = %s AND option_value = %s", $row->option_name, $row->option_value ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
			}
		}
	}

	/**
	 * Whether a row of that name exists (live or not).
	 *
	 * @param string $name The option name.
	 */
	private static function exists( string $name ): bool {
		global $wpdb;
		return null !== $wpdb->get_var( $wpdb->prepare( "SELECT 1 FROM {$wpdb->options} WHERE option_name = %s", $name ) ); // phpcs:ignore WordPress.DB.DirectDatabaseQuery
	}
}
