/**
 * The shared timing wheels every handler of wheelbeat puts its timers on, one per event loop
 * ({@link io.wheelbeat.netty.EventLoopWheels}, with {@link io.wheelbeat.netty.EventLoopWheelsMetrics}),
 * and {@link io.wheelbeat.netty.NettyWheelTimer}, Netty's {@code io.netty.util.Timer} on a wheel:
 * use it where code takes a {@code HashedWheelTimer}.
 *
 * <p>The handlers are in the feature packages: {@code idle} (drop-in for Netty's
 * {@code IdleStateHandler}), {@code deadline} (first-message timeout, maximum connection age),
 * {@code guard} (slow consumers, paced closes), {@code heartbeat} (application pings),
 * {@code websocket}, {@code http2} and {@code mqtt} (protocol keepalives), {@code ratelimit} and
 * {@code reconnect}.
 *
 * <p>{@link io.wheelbeat.netty.HandlerBuilder} and {@link io.wheelbeat.netty.JitteredHandlerBuilder}
 * hold the settings the handlers' builders share ({@code wheels}, {@code metrics}, {@code random}),
 * each once; only wheelbeat's builders extend them.
 *
 * <p>Thread rules: {@code EventLoopWheels} and {@code NettyWheelTimer} are thread-safe; builders
 * are not.
 */
package io.wheelbeat.netty;
