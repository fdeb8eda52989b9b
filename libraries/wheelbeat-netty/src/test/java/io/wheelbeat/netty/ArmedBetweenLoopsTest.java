package io.wheelbeat.netty;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.netty.idle.WheelWriteTimeoutHandler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A timer armed while an active channel is on no loop ({@code deregister()} done, {@code register}
 * with loop B not yet): events reach the handlers then on loop A, the channel's loop until it is
 * registered again. The timer must wait on loop B's wheel once the channel is there, none on A's.
 * Netty's {@code DefaultEventLoop}s and LocalChannels; every step waits for the loop that runs it
 * (10 s at most, only to end a failing run), so the order does not depend on speed.
 */
class ArmedBetweenLoopsTest {

    private static final long WAIT_S = 10;

    private final DefaultEventLoop loopA = new DefaultEventLoop();
    private final DefaultEventLoop loopB = new DefaultEventLoop();
    private final DefaultEventLoop serverLoop = new DefaultEventLoop();

    @AfterEach
    void shutDown() throws InterruptedException {
        for (DefaultEventLoop loop : new DefaultEventLoop[] {serverLoop, loopA, loopB}) {
            loop.shutdownGracefully(0, 0, SECONDS).await(WAIT_S, SECONDS);
        }
    }

    /** Arms its timer an hour ahead on each user event. */
    static final class ArmsOnEvent extends ChannelTimerHandler {
        final TimerNode timer = new TimerNode() {
            @Override
            protected void expire() {}
        };

        ArmsOnEvent() {
            super(EventLoopWheels.shared());
        }

        @Override
        protected void onStart(ChannelHandlerContext ctx, long nowNanos) {}

        @Override
        protected void onStop() {
            cancel(timer);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            schedule(timer, TimeUnit.HOURS.toNanos(1));
        }
    }

    /** An active LocalChannel on loop A with {@code handler}, then deregistered: on no loop. */
    private Channel activeThenAway(ChannelHandler handler) throws Exception {
        LocalAddress address = new LocalAddress(ArmedBetweenLoopsTest.class);
        new ServerBootstrap()
                .group(serverLoop)
                .channel(LocalServerChannel.class)
                .childHandler(new ChannelInboundHandlerAdapter())
                .bind(address)
                .sync();
        ChannelFuture connected = new Bootstrap()
                .group(loopA)
                .channel(LocalChannel.class)
                .handler(handler)
                .connect(address);
        assertTrue(connected.await(WAIT_S, SECONDS) && connected.isSuccess(), "connected");
        Channel ch = connected.channel();
        assertTrue(ch.deregister().await(WAIT_S, SECONDS), "deregister");
        assertFalse(ch.isRegistered());
        assertTrue(ch.isActive());
        return ch;
    }

    @SuppressWarnings("deprecation") // EventLoop.register(Channel): 4.2 deprecates it, 4.1 has nothing else
    private static void registerOn(EventLoop loop, Channel ch) throws InterruptedException {
        assertTrue(loop.register(ch).await(WAIT_S, SECONDS), "register on loop B");
        assertTrue(ch.isRegistered() && ch.eventLoop() == loop);
    }

    private static int pendingTimers(EventLoop loop) throws Exception {
        return loop.submit(() -> EventLoopWheels.shared().wheelFor(loop).pendingTimers())
                .get(WAIT_S, SECONDS);
    }

    /**
     * Closes {@code ch} on loop B, its loop, and waits for what the close hands to the loops: its
     * {@code channelInactive} (a task queued by the close), the peer's close, a write's failure.
     */
    private void closeOnLoopB(Channel ch) throws Exception {
        loopB.submit(() -> ch.close()).get(WAIT_S, SECONDS);
        for (EventLoop loop : new EventLoop[] {loopB, serverLoop, loopA, loopB}) {
            drain(loop);
        }
        assertFalse(ch.isOpen());
    }

    /** Waits until {@code loop} ran everything queued before. */
    private static void drain(EventLoop loop) throws Exception {
        loop.submit(() -> {}).get(WAIT_S, SECONDS);
    }

    @Test
    void aTimerArmedOnNoLoopWaitsOnTheNewLoopsWheel() throws Exception {
        ArmsOnEvent handler = new ArmsOnEvent();
        Channel ch = activeThenAway(handler);
        ch.pipeline().fireUserEventTriggered("arm"); // runs on loop A, the channel's until registered again
        drain(loopA);
        registerOn(loopB, ch);
        assertEquals(0, pendingTimers(loopA), "nothing on the wheel of the loop the channel left");
        assertEquals(1, pendingTimers(loopB), "the timer waits on the channel's loop");
        assertTrue(loopB.submit(handler.timer::isPending).get(WAIT_S, SECONDS));
        closeOnLoopB(ch);
        assertEquals(0, pendingTimers(loopB), "closed: cancelled");
    }

    @Test
    void aWriteOnNoLoopIsTimedOnTheNewLoopsWheel() throws Exception {
        Channel ch = activeThenAway(new WheelWriteTimeoutHandler(Duration.ofHours(1)));
        ch.write("unflushed"); // runs on loop A; its promise stays pending
        drain(loopA);
        registerOn(loopB, ch);
        assertEquals(0, pendingTimers(loopA), "nothing on the wheel of the loop the channel left");
        assertEquals(1, pendingTimers(loopB), "the write is timed on the channel's loop");
        closeOnLoopB(ch);
    }
}
