/**
 * Internal: not part of wheelbeat's API, exported only to wheelbeat's own modules. The timing
 * wheel engine ({@link io.wheelbeat.core.internal.TimerWheel}, driven by the public
 * {@code ExecutorDrivenWheel} and {@code WheelTimer}) and the checks every settings class and
 * builder share ({@link io.wheelbeat.core.internal.ConfigChecks}).
 */
package io.wheelbeat.core.internal;
