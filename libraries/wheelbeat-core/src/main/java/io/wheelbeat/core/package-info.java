/**
 * The hashed timing wheel and its drivers, with no Netty. Use it when you schedule, cancel and
 * re-arm many timers (one or more per connection) and want O(1) operations without allocation.
 *
 * <p>Two roads to a wheel (thread rules on each), both set up with
 * {@link io.wheelbeat.core.WheelSettings}:
 * <ul>
 *   <li>{@link io.wheelbeat.core.ExecutorDrivenWheel}: a wheel driven by a single-threaded
 *       executor (a Netty event loop in netty-handler), with allocation-free
 *       {@link io.wheelbeat.core.TimerNode}s on the owner thread and {@link io.wheelbeat.core.WheelScheduler#newTimeout} from any thread;</li>
 *   <li>{@link io.wheelbeat.core.WheelTimer}: a wheel with a thread of its own, thread-safe, in the
 *       role of Netty's {@code HashedWheelTimer} (netty-handler's {@code NettyWheelTimer} is
 *       Netty's {@code Timer} on it).</li>
 * </ul>
 * {@link io.wheelbeat.core.TimerWheelMetrics} binds a wheel's meters (needs Micrometer, an
 * optional dependency). {@link io.wheelbeat.core.ManualTicker} is virtual time for tests.
 *
 * <p>The wheel itself ({@link io.wheelbeat.core.TimerWheel}, the engine) takes time as an
 * argument and knows nothing of its drivers.
 */
package io.wheelbeat.core;
