/**
 * The shared per-event-loop wheels ({@link io.wheelbeat.netty.EventLoopWheels}), the base of the
 * per-channel handlers ({@link io.wheelbeat.netty.ChannelTimerHandler}), the builders' shared
 * settings, and {@link io.wheelbeat.netty.NettyWheelTimer}, Netty's {@code Timer} on a wheel. The
 * handlers are in the feature packages. {@code EventLoopWheels} and {@code NettyWheelTimer} are
 * thread-safe; builders are not.
 */
package io.wheelbeat.netty;
