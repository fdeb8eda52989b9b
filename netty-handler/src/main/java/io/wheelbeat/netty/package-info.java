/**
 * Netty handlers whose timers live on one shared timing wheel per event loop
 * ({@link io.wheelbeat.netty.EventLoopWheels}). Use this package for idle detection and
 * connection deadlines: {@link io.wheelbeat.netty.WheelIdleStateHandler} (drop-in for Netty's
 * {@code IdleStateHandler}), {@link io.wheelbeat.netty.ConnectionDeadlineHandler} (first-message
 * timeout, maximum connection age), {@link io.wheelbeat.netty.SlowConsumerHandler} and
 * {@link io.wheelbeat.netty.ClosePacer} (guards against slow readers and storms of closes), and
 * {@link io.wheelbeat.netty.NettyWheelTimer} (Netty's {@code Timer} on a wheel).
 *
 * <p>Handlers are confined to their channel's event loop; factories, wheels and the pacer are
 * thread-safe. Heartbeats, protocol keepalives, rate limits and reconnection are in the
 * sub-packages.
 */
package io.wheelbeat.netty;
