/**
 * Guards against peers: {@link io.wheelbeat.netty.guard.SlowConsumerHandler} bounds what a peer
 * that does not read may hold; {@link io.wheelbeat.netty.guard.ClosePacer} spreads closes over time.
 */
package io.wheelbeat.netty.guard;
