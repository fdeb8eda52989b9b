/**
 * Idle detection: {@link io.wheelbeat.netty.idle.WheelIdleStateHandler}, a drop-in for Netty's
 * {@code IdleStateHandler} with Netty's events at Netty's moments, whose timers are nodes it holds,
 * armed on the event loop's shared wheel. Use it where you would use {@code IdleStateHandler} (or subclass it
 * where you would subclass that, as Netty's {@code ReadTimeoutHandler} does).
 *
 * <p>Thread rules: a handler serves one channel, on its event loop; a built
 * {@link io.wheelbeat.netty.idle.WheelIdleStateHandler.Factory} is thread-safe.
 */
package io.wheelbeat.netty.idle;
