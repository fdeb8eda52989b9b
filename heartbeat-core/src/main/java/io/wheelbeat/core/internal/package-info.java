/**
 * Internal: not part of wheelbeat's API, and exported to no module. The timing wheel engine
 * ({@link io.wheelbeat.core.internal.TimerWheel}), a leaf that only the drivers in
 * {@code io.wheelbeat.core} ({@code ExecutorDrivenWheel}, {@code WheelTimer}) reach.
 */
package io.wheelbeat.core.internal;
