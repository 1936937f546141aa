<?php
/**
 * ES256 JWTs signed by Mandate (ID tokens, logout tokens), checked with openssl against its JWKS.
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

/**
 * A token that is not what it claims: the message says which rule it broke.
 */
final class Mandate_Invalid_Token extends RuntimeException {}

/**
 * Decoding and signature checks; the claim rules are the caller's.
 */
final class Mandate_Jwt {

	/** DER prefix of a P-256 SubjectPublicKeyInfo before the uncompressed point (04 || x || y). */
	const P256_SPKI_PREFIX = '3059301306072a8648ce3d020106082a8648ce3d030107034200';

	/** Base64url without padding; false for anything else. */
	public static function b64url_decode( string $text ): string|false {
		if ( ! preg_match( '/^[A-Za-z0-9_-]*$/', $text ) ) {
			return false;
		}
		return base64_decode( strtr( $text, '-_', '+/' ), true ); // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_decode
	}

	/**
	 * The header and claims of a token whose ES256 signature one of Mandate's keys made. Throws
	 * Mandate_Invalid_Token for any fault, Mandate_Unavailable when the keys cannot be fetched.
	 *
	 * @param string $jwt          The compact JWS.
	 * @param string $expected_typ The `typ` the header must carry ('' for any).
	 * @return array{0:array,1:array}
	 */
	public static function verify( string $jwt, string $expected_typ ): array {
		$parts = explode( '.', $jwt );
		if ( 3 !== count( $parts ) || strlen( $jwt ) > 16384 ) {
			throw new Mandate_Invalid_Token( 'not a compact JWT' );
		}
		$header = json_decode( (string) self::b64url_decode( $parts[0] ), true );
		$claims = json_decode( (string) self::b64url_decode( $parts[1] ), true );
		$sig    = self::b64url_decode( $parts[2] );
		if ( ! is_array( $header ) || ! is_array( $claims ) || false === $sig ) {
			throw new Mandate_Invalid_Token( 'the JWT is not base64url JSON' );
		}
		if ( 'ES256' !== ( $header['alg'] ?? null ) ) {
			throw new Mandate_Invalid_Token( 'the JWT "alg" is not ES256' );
		}
		if ( '' !== $expected_typ && strtolower( (string) ( $header['typ'] ?? '' ) ) !== $expected_typ ) {
			throw new Mandate_Invalid_Token( sprintf( 'the JWT "typ" is not %s', $expected_typ ) );
		}
		$kid = $header['kid'] ?? null;
		if ( ! is_string( $kid ) ) {
			throw new Mandate_Invalid_Token( 'the JWT has no "kid"' );
		}
		$keys = Mandate_Http::jwks();
		if ( ! isset( $keys[ $kid ] ) ) {
			$keys = Mandate_Http::jwks( true );
		}
		if ( ! isset( $keys[ $kid ] ) ) {
			throw new Mandate_Invalid_Token( 'no key of Mandate has the JWT\'s "kid"' );
		}
		$pem = self::pem( $keys[ $kid ] );
		if ( 64 !== strlen( $sig ) || 1 !== openssl_verify( $parts[0] . '.' . $parts[1], self::der_signature( $sig ), $pem, OPENSSL_ALGO_SHA256 ) ) {
			throw new Mandate_Invalid_Token( 'the JWT signature verification failed' );
		}
		return array( $header, $claims );
	}

	/**
	 * The PEM of a public EC P-256 JWK.
	 *
	 * @param array $jwk The key.
	 */
	private static function pem( array $jwk ): string {
		$x = self::b64url_decode( (string) ( $jwk['x'] ?? '' ) );
		$y = self::b64url_decode( (string) ( $jwk['y'] ?? '' ) );
		if ( 'EC' !== ( $jwk['kty'] ?? null ) || 'P-256' !== ( $jwk['crv'] ?? null ) || false === $x || false === $y || 32 !== strlen( $x ) || 32 !== strlen( $y ) ) {
			throw new Mandate_Invalid_Token( 'Mandate\'s key for this "kid" is not an EC P-256 key' );
		}
		$der = hex2bin( self::P256_SPKI_PREFIX ) . "\x04" . $x . $y;
		return "-----BEGIN PUBLIC KEY-----\n" . chunk_split( base64_encode( $der ), 64, "\n" ) . "-----END PUBLIC KEY-----\n"; // phpcs:ignore WordPress.PHP.DiscouragedPHPFunctions.obfuscation_base64_encode
	}

	/**
	 * JOSE's r || s signature as the DER SEQUENCE openssl reads.
	 *
	 * @param string $raw 64 bytes.
	 */
	private static function der_signature( string $raw ): string {
		$int = static function ( string $n ): string {
			$n = ltrim( $n, "\x00" );
			if ( '' === $n || ord( $n[0] ) > 0x7f ) {
				$n = "\x00" . $n;
			}
			return "\x02" . chr( strlen( $n ) ) . $n;
		};
		$seq = $int( substr( $raw, 0, 32 ) ) . $int( substr( $raw, 32 ) );
		return "\x30" . chr( strlen( $seq ) ) . $seq;
	}

	/**
	 * The rules every token Mandate signs for this client meets: iss, aud, exp, iat.
	 *
	 * @param array $claims  The claims.
	 * @param int   $max_age The oldest `iat` accepted, in seconds.
	 */
	public static function check_common( array $claims, int $max_age ): void {
		$now = time();
		if ( ( $claims['iss'] ?? null ) !== Mandate_Settings::service_url() ) {
			throw new Mandate_Invalid_Token( 'the token\'s "iss" is not the Mandate service URL' );
		}
		$aud = $claims['aud'] ?? null;
		$id  = Mandate_Settings::get( 'client_id' );
		if ( ! ( $aud === $id || ( is_array( $aud ) && in_array( $id, $aud, true ) ) ) ) {
			throw new Mandate_Invalid_Token( 'the token\'s "aud" is not this site\'s client id' );
		}
		if ( ! is_int( $claims['exp'] ?? null ) || $claims['exp'] <= $now - 30 ) {
			throw new Mandate_Invalid_Token( 'the token has expired (or has no "exp")' );
		}
		if ( ! is_int( $claims['iat'] ?? null ) || $claims['iat'] > $now + 60 || $claims['iat'] < $now - $max_age ) {
			throw new Mandate_Invalid_Token( 'the token\'s "iat" is missing, in the future or too far in the past' );
		}
	}
}
