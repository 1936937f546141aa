<?php
/**
 * Plugin Name:       Mandate
 * Description:       Lets AI agents use this site on behalf of people, with each person's approval: REST API passes checked by Mandate, step-ups for sensitive routes, "Sign in with Mandate" for agents, back-channel logout and CIBA confirmation.
 * Version:           0.1.0
 * Requires at least: 6.1
 * Requires PHP:      8.1
 * Author:            Mandate
 * License:           MIT
 * Text Domain:       mandate
 *
 * @package Mandate
 */

defined( 'ABSPATH' ) || exit;

define( 'MANDATE_PLUGIN_VERSION', '0.1.0' );
define( 'MANDATE_PLUGIN_FILE', __FILE__ );

require_once __DIR__ . '/includes/class-mandate-settings.php';
require_once __DIR__ . '/includes/class-mandate-http.php';
require_once __DIR__ . '/includes/class-mandate-jwt.php';
require_once __DIR__ . '/includes/class-mandate-once.php';
require_once __DIR__ . '/includes/class-mandate-routes.php';
require_once __DIR__ . '/includes/class-mandate-rest-guard.php';
require_once __DIR__ . '/includes/class-mandate-sign-in.php';
require_once __DIR__ . '/includes/class-mandate-backchannel.php';
require_once __DIR__ . '/includes/class-mandate-ciba.php';

Mandate_Settings::register();
Mandate_Rest_Guard::register();
Mandate_Sign_In::register();
Mandate_Backchannel::register();
Mandate_Ciba::register();
Mandate_Once::register();

register_activation_hook( __FILE__, array( 'Mandate_Once', 'schedule' ) );
register_deactivation_hook( __FILE__, array( 'Mandate_Once', 'unschedule' ) );
