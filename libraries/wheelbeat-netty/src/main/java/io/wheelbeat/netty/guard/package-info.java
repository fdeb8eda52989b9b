/**
 * Guards of a server against its own peers: {@link io.wheelbeat.netty.guard.SlowConsumerHandler}
 * bounds what a peer that does not read may hold (write buffer water marks, a pending-bytes cap,
 * an unwritable deadline), and {@link io.wheelbeat.netty.guard.ClosePacer} spreads closes (idle
 * storms, a lame-duck shutdown) over time so that clients do not reconnect in a herd. See
 * docs/guards.md.
 *
 * <p>Thread rules: a {@code SlowConsumerHandler} serves one channel, on its event loop; its
 * factory and the {@code ClosePacer} are thread-safe.
 */
package io.wheelbeat.netty.guard;
