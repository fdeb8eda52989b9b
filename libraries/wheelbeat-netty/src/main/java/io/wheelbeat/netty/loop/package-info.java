/**
 * An event loop group for Netty 4.2 whose loops keep every scheduled task on the loop's timing
 * wheel: {@link io.wheelbeat.netty.loop.WheelIoEventLoopGroup}. The loop and its task type are
 * package-private.
 */
package io.wheelbeat.netty.loop;
