package io.wheelbeat.netty.loop;

import static io.netty.handler.timeout.IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.READER_IDLE_STATE_EVENT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A reader-only {@link WheelIdleStateHandler} built by Netty's constructor (its idle time in its
 * flags, its wheel found from its loop) keeps Netty's instants wherever the loop's clock starts: at
 * {@code Long.MIN_VALUE}, crossing zero, and across the wrap past {@code Long.MAX_VALUE}. The
 * server's handler sees a read every 700 ms while the clock crosses 2 s after the start (where it
 * wraps or crosses zero), then silence: its first reader-idle event comes exactly 1 s after the last
 * read, the next 1 s later. On a {@link WheelIoEventLoopGroup} loop whose clock the test moves
 * ({@link LoopClock}): Netty's own loop cannot run there.
 */
class WheelIdleStateHandlerAtAnyClockOriginTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @ParameterizedTest(name = "clock starting at {0}")
    @ValueSource(longs = {Long.MIN_VALUE, -2_000_000_000L, Long.MAX_VALUE - 2_000_000_000L})
    void readerIdleFiresOneIdleTimeAfterTheLastReadWhereverTheClockStarts(long origin) throws Exception {
        LoopClock clock = new LoopClock(origin);
        EventLoopGroup group = clock.wheelGroup();
        List<IdleStateEvent> events = new CopyOnWriteArrayList<>();
        List<Long> eventTimes = new CopyOnWriteArrayList<>();
        AtomicInteger progress = new AtomicInteger();
        try {
            EventLoop loop = group.next();
            LocalAddress address = new LocalAddress("idle-origin-" + origin);
            new ServerBootstrap()
                    .group(group)
                    .channel(LocalServerChannel.class)
                    .childHandler(new ChannelInitializer<LocalChannel>() {
                        @Override
                        protected void initChannel(LocalChannel ch) {
                            ch.pipeline()
                                    .addLast(new WheelIdleStateHandler(1, 0, 0), new ChannelInboundHandlerAdapter() {
                                        @Override
                                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                            progress.incrementAndGet();
                                        }

                                        @Override
                                        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                            progress.incrementAndGet();
                                            events.add((IdleStateEvent) evt);
                                            eventTimes.add(clock.nanoTime() - origin);
                                        }
                                    });
                        }
                    })
                    .bind(address)
                    .sync();
            Channel client = new Bootstrap()
                    .group(group)
                    .channel(LocalChannel.class)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(address)
                    .sync()
                    .channel();

            long lastRead = 0;
            for (int i = 0; i < 6; i++) {
                clock.runFor(loop, progress, 7 * SECOND / 10);
                lastRead = clock.nanoTime() - origin;
                loop.submit(() -> client.writeAndFlush("DATA")).sync(); // read before the clock moves on
            }
            clock.runFor(loop, progress, 2 * SECOND + SECOND / 2);
            assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT, READER_IDLE_STATE_EVENT), events, eventTimes::toString);
            assertEquals(List.of(lastRead + SECOND, lastRead + 2 * SECOND), eventTimes);
        } finally {
            clock.shutDown(group);
        }
    }
}
