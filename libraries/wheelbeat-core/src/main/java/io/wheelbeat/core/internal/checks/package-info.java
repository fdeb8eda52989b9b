/**
 * Internal: not part of wheelbeat's API, exported only to wheelbeat's own modules. The checks
 * every settings class and builder share
 * ({@link io.wheelbeat.core.internal.checks.ConfigChecks}); kept apart from the wheel engine so
 * that the modules that need the checks cannot reach the engine.
 */
package io.wheelbeat.core.internal.checks;
